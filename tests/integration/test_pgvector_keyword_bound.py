"""pgvector memories mode on a large namespace: kept keyword counts (migration 7) and keyword
candidates bounded by the ranking give the exhaustive ranking (ADR 0030)."""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql
from support.first_axis import at_cosine, first_axis_backend

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector import schema
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.lexical import (
    LEXICAL_WEIGHT,
    coverage,
    fused_score,
    idf_weights,
    lexical_terms,
    query_terms,
)
from factledger.application.memory.types import (
    Namespace,
    RelationKind,
    SearchHit,
    SearchQuery,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import drop_schema, fresh_schema, pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = pytest.mark.integration
NS, OTHER = Namespace("tenant-1:large"), Namespace("tenant-1:other")
EMBEDDER = HashingEmbedder(64)
COMMON = ("prefers", "weekly", "calls", "team", "office", "morning", "supplier", "invoices")
RARE = tuple(f"word{n:03d}" for n in range(120))
START = datetime(2026, 1, 1, tzinfo=UTC)
HOLDERS = "SELECT keyword_holders(%s::text[], %s::text[], %s::double precision[], 1.0)"
HOLDERS_OF_ALL = (
    "SELECT keyword_holders_of_all(%s::text[], %s::text[], %s::double precision[], 1.0)"
)


def fact_texts(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    return [
        " ".join([*rnd.sample(COMMON, rnd.randint(2, 5)), *rnd.sample(RARE, rnd.randint(0, 2))])
        for _ in range(count)
    ]


def facts(texts: list[str], *, tag: str, slots: bool = False) -> list[ExtractedFact]:
    return [
        ExtractedFact(
            key=f"f{i}",
            text=text,
            slot=f"slot-{i % 7}" if slots else None,
            source_indexes=(0,),
            relation=RelationKind.UPDATES if slots else None,
            is_inference=(i % 5 == 4),
        )
        for i, text in enumerate(texts)
    ]


async def ingest(
    backend: PgvectorMemoryBackend, extractor: ScriptedExtractor, ns: Namespace, doc: str, **kw: Any
) -> None:
    texts = fact_texts(zlib.crc32(doc.encode()), 30)
    transcript = extractor.script(f"{ns} {doc}", *facts(texts, tag=doc, **kw))
    await backend.ingest_transcript(ns, doc, transcript, occurred_at=START)


async def kept_counts(config: PgvectorConfig) -> dict[tuple[Any, ...], int]:
    return await _counts(
        config,
        "SELECT namespace, term, is_inference, is_latest, is_forgotten, facts FROM {}.memory_terms",
    )


async def recounted(config: PgvectorConfig) -> dict[tuple[Any, ...], int]:
    return await _counts(
        config,
        "SELECT namespace, t, is_inference, is_latest, is_forgotten, count(*) FROM {}.memories "
        "CROSS JOIN LATERAL unnest(array_append(lexical_terms, '')) AS t "
        "GROUP BY namespace, t, is_inference, is_latest, is_forgotten",
    )


async def _counts(config: PgvectorConfig, statement: str) -> dict[tuple[Any, ...], int]:
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
        cur = await conn.execute(sql.SQL(statement).format(sql.Identifier(config.schema)))
        return {tuple(row[:5]): int(row[5]) for row in await cur.fetchall()}


@pytest.fixture
async def opened(
    postgres: PostgresLocation,
) -> AsyncIterator[tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock]]:
    extractor, clock = ScriptedExtractor(), ManualClock(START)
    async with pgvector_backend(
        postgres, embedder=EMBEDDER, extractor=extractor, clock=clock
    ) as backend:
        yield backend, extractor, clock


async def test_kept_counts_follow_ingest_supersession_forgetting_expiry_and_drops(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    backend, extractor, clock = opened
    for n in range(3):
        await ingest(backend, extractor, NS, f"doc-{n}", slots=True)
        await ingest(backend, extractor, NS, f"doc-{n}", slots=True)  # a replay adds nothing
    await ingest(backend, extractor, OTHER, "doc-0")
    listed = await backend.list_memories(NS, limit=10)
    await backend.forget(NS, [listed[0].id, listed[1].id], reason="asked")
    await backend.expire(NS, listed[2].id, at=clock.now() + timedelta(days=1))
    assert await kept_counts(backend.config) == await recounted(backend.config)

    await backend.drop_namespace(OTHER)

    kept = await kept_counts(backend.config)
    assert kept == await recounted(backend.config)
    assert not any(key[0] == OTHER for key in kept)
    assert all(count > 0 for count in kept.values())


async def test_a_forgotten_facts_words_leave_the_counts(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    backend, extractor, _ = opened
    transcript = extractor.script(
        "only",
        ExtractedFact(key="f0", text="diagnosed with zebrafinch", slot=None, source_indexes=(0,)),
    )
    await backend.ingest_transcript(NS, "d", transcript, occurred_at=START)
    [fact] = await backend.list_memories(NS)

    await backend.forget(NS, [fact.id], reason="asked")

    assert not any(key[1] == "zebrafinch" for key in await kept_counts(backend.config))


async def test_concurrent_writers_of_one_namespace_keep_the_counts_exact(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    backend, extractor, _ = opened
    await ingest(backend, extractor, NS, "first", slots=True)
    listed = await backend.list_memories(NS, limit=20)

    await asyncio.gather(
        *(ingest(backend, extractor, NS, f"c-{n}", slots=True) for n in range(6)),
        *(backend.forget(NS, [fact.id], reason="asked") for fact in listed[:6]),
    )

    assert await kept_counts(backend.config) == await recounted(backend.config)


def exhaustive_top(
    rows: list[tuple[str, list[str], np.ndarray[Any, Any]]],
    vector: np.ndarray[Any, Any],
    text: str,
    limit: int,
) -> list[tuple[str, float]]:
    terms = query_terms(text)
    frequency = {t: sum(1 for _, held, _ in rows if t in held) for t in terms}
    weights = idf_weights(terms, frequency, len(rows))
    scored = [
        (fid, fused_score(min(1.0, float(v @ vector)), coverage(terms, weights, set(held))))
        for fid, held, v in rows
    ]
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:limit]


async def visible_rows(
    config: PgvectorConfig, ns: Namespace, *, now: datetime
) -> list[tuple[str, list[str], np.ndarray[Any, Any]]]:
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
        cur = await conn.execute(
            sql.SQL(
                "SELECT id, lexical_terms, embedding::text FROM {}.memories WHERE namespace = %s "
                "AND is_latest AND NOT is_inference AND NOT is_forgotten "
                "AND (expires_at IS NULL OR expires_at > %s)"
            ).format(sql.Identifier(config.schema)),
            [ns, now],
        )
        return [
            (row[0], list(row[1]), np.array(row[2].strip("[]").split(","), dtype=np.float64))
            for row in await cur.fetchall()
        ]


SCORE_ULP = 1e-6


def untied_positions(ranking: list[tuple[str, float]], top: int) -> list[int]:
    """Positions among the first `top` of a whole ranking whose score no other fact's nears
    (facts past `top` included: a tie across the cut-off may come back either way)."""
    return [
        i
        for i, (_, score) in enumerate(ranking[:top])
        if all(abs(score - other) > SCORE_ULP for j, (_, other) in enumerate(ranking) if j != i)
    ]


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize("limit", [3, 10])
async def test_bounded_search_ranks_as_the_exhaustive_scoring(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
    monkeypatch: pytest.MonkeyPatch,
    limit: int,
    indexed: bool,
) -> None:
    backend, extractor, clock = opened
    for n in range(8):
        await ingest(backend, extractor, NS, f"doc-{n}", slots=n % 2 == 0)

    async def as_if_indexed(_: Namespace) -> bool:
        # With no index built either way the vector list is exact, so the ranking must be too;
        # "indexed" only writes the namespace as a literal, as for a partial index.
        return indexed

    monkeypatch.setattr(backend.searcher, "has_ann", as_if_indexed)
    for fact in (await backend.list_memories(NS, limit=40))[::8]:  # expired, not flagged
        await backend.expire(NS, fact.id, at=clock.now() - timedelta(seconds=1))
    rows = await visible_rows(backend.config, NS, now=clock.now())
    rnd = random.Random(3)
    for _ in range(25):
        words = [*rnd.sample(COMMON, rnd.randint(1, 4)), *rnd.sample(RARE, rnd.randint(0, 2))]
        text = " ".join(rnd.sample(words, len(words)))
        vector = (await EMBEDDER.embed([text]))[0].astype(np.float64)

        hits = await backend.search(NS, SearchQuery(text, threshold=0.0, limit=limit))

        ranking = [pair for pair in exhaustive_top(rows, vector, text, len(rows)) if pair[1] >= 0]
        expected = ranking[:limit]
        # pgvector's cosine is float32 arithmetic, the exhaustive one float64: they differ by
        # ~1e-8, so scores compare within a tolerance (rounding both can straddle a boundary).
        # Ids compare wherever the score has no near-tie, where any order is legitimate.
        assert [h.score for h in hits] == pytest.approx([s for _, s in expected], abs=SCORE_ULP)
        untied = untied_positions(ranking, limit)
        assert [hits[i].id for i in untied] == [expected[i][0] for i in untied]


async def test_an_upgrade_from_migration_6_counts_the_facts_already_there(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = await fresh_schema(postgres)
    options = schema.SchemaOptions(config.schema, config.app_role, 64, create_app_role=True)
    before = tuple(m for m in schema.MIGRATIONS if m[0] <= 6)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(schema, "MIGRATIONS", before)
            assert await schema.apply_migrations(config.admin_conninfo, options) == [
                1,
                2,
                3,
                4,
                5,
                6,
            ]
        texts = fact_texts(1, 200)
        vectors = await EMBEDDER.embed(texts)
        await bulk_load_facts(
            config,
            [
                BulkFact(NS, f"m-{i}", t, vectors[i], terms=tuple(lexical_terms(t, "", None)))
                for i, t in enumerate(texts)
            ],
        )
        async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
            # Forgotten under migration 6: flagged, its keywords still there.
            await conn.execute(
                sql.SQL("UPDATE {}.memories SET is_forgotten = true WHERE id = 'm-0'").format(
                    sql.Identifier(config.schema)
                )
            )

        later = [version for version, _, _ in schema.MIGRATIONS if version > 6]
        assert await schema.apply_migrations(config.admin_conninfo, options) == later

        kept = await kept_counts(config)
        assert kept == await recounted(config)
        assert kept[(NS, "", False, True, True)] == 1  # the forgotten fact, now without words
        assert sum(c for k, c in kept.items() if k[1] == "" and not k[4]) == 199
    finally:
        await drop_schema(config)


async def test_the_holder_lookup_answers_for_the_bound_namespace_only(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    backend, extractor, _ = opened
    await ingest(backend, extractor, NS, "doc-0")
    await ingest(backend, extractor, OTHER, "doc-0")  # the same texts, other ids
    every_word = query_terms(" ".join(COMMON))  # as a search asks: inflections folded

    async with backend.db.bound(NS) as conn:
        cur = await conn.execute(HOLDERS, [every_word, every_word, [1.0] * len(every_word)])
        bound = {row[0] for row in await cur.fetchall()}
    async with backend.db.unbound() as conn:
        cur = await conn.execute(HOLDERS, [every_word, every_word, [1.0] * len(every_word)])
        unbound = await cur.fetchall()

    own = {fact.id for fact in await backend.list_memories(NS, limit=100)}
    assert bound == own
    assert unbound == []


async def test_the_holders_of_every_keyword_answer_for_the_bound_namespace_only(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    backend, extractor, _ = opened
    await ingest(backend, extractor, NS, "doc-0")
    await ingest(backend, extractor, OTHER, "doc-0")  # the same texts, other ids
    both = query_terms("team office")

    async with backend.db.bound(NS) as conn:
        cur = await conn.execute(HOLDERS_OF_ALL, [both, both, [1.0] * len(both)])
        bound = {row[0] for row in await cur.fetchall()}
    async with backend.db.unbound() as conn:
        cur = await conn.execute(HOLDERS_OF_ALL, [both, both, [1.0] * len(both)])
        unbound = await cur.fetchall()

    async with await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn:
        cur = await conn.execute(
            sql.SQL(
                "SELECT id FROM {}.memories WHERE namespace = %s AND lexical_terms @> %s"
            ).format(sql.Identifier(backend.config.schema)),
            [NS, both],
        )
        holding_both = {row[0] for row in await cur.fetchall()}
    assert bound == holding_both
    assert bound  # the texts are drawn so that some facts hold both
    assert unbound == []


async def test_a_crafted_keyword_reaches_no_fact_of_a_namespace_that_shares_its_key(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    """Migration 10 keys the holder lookups `namespace/keyword`: a namespace `tenant-1:x/team`'s
    key for `office` reads like `tenant-1:x`'s for the keyword `team/office`, which no query
    makes but a caller of the functions could pass. The namespace check keeps them apart."""
    backend, extractor, _ = opened
    slashed = Namespace("tenant-1:x/team")
    await ingest(backend, extractor, slashed, "doc-0")
    crafted = ["team/office"]

    for holders in (HOLDERS, HOLDERS_OF_ALL):
        async with backend.db.bound(Namespace("tenant-1:x")) as conn:
            cur = await conn.execute(holders, [crafted, crafted, [1.0]])
            assert await cur.fetchall() == []
        async with backend.db.bound(slashed) as conn:
            office = ["office"]
            cur = await conn.execute(holders, [office, office, [1.0]])
            assert await cur.fetchall()  # its own facts hold `office`


async def test_the_holder_lookups_read_the_namespaced_keyword_index(
    opened: tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock],
) -> None:
    """The functions' lookup is the index expression of migration 10 (ADR 0052), so the
    planner can serve it from that index and not from every namespace's postings."""
    backend, extractor, _ = opened
    await ingest(backend, extractor, NS, "doc-0")
    async with await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn:
        cur = await conn.execute(
            "SELECT p.proname, p.prosrc FROM pg_proc AS p JOIN pg_namespace AS n "
            "ON n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname IN "
            "('keyword_holders', 'keyword_holders_of_all')",
            [backend.config.schema],
        )
        bodies = dict(await cur.fetchall())
        cur = await conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s "
            "AND tablename = 'memories' AND indexdef LIKE '%%USING gin%%'",
            [backend.config.schema],
        )
        gin = dict(await cur.fetchall())
    assert set(bodies) == {"keyword_holders", "keyword_holders_of_all"}
    assert all('"namespaced_terms"(m.namespace, m.lexical_terms)' in b for b in bodies.values())
    assert list(gin) == ["memories_namespaced_terms"]  # the index keyed by keyword alone went
    assert "namespaced_terms(namespace, lexical_terms)" in gin["memories_namespaced_terms"]


async def test_a_holder_of_common_keywords_reaches_the_top_past_a_rarer_one(
    postgres: PostgresLocation,
) -> None:
    """The holders looked up must include a fact lifted by two common keywords when the rarest
    keyword is not needed to reach the bar (a lookup of the rarest alone would miss it)."""
    # Given: 20 facts without keywords fill the vector list (cosines 0.60 down to 0.41); just
    # outside it, a fact holding "lantern" and "harbour" (3 holders each), which lift it to
    # 0.595, past the limit-th best (0.58); "walnut" (2 holders) is rarer.
    held_share = (2 * 2.1812) / (2 * 2.1812 + 2.5177)  # IDFs: lantern, harbour; walnut
    lifted_from = 0.595 - LEXICAL_WEIGHT * held_share
    assert lifted_from < 0.41  # outside the vector list, whatever the weight
    cosines_and_terms: list[tuple[float, tuple[str, ...]]] = [
        (0.60 - i * 0.01, ()) for i in range(20)
    ]
    cosines_and_terms += [(lifted_from, ("lantern", "harbour"))]
    cosines_and_terms += [(0.05, ("lantern",)), (0.04, ("lantern",))]
    cosines_and_terms += [(0.03, ("harbour",)), (0.02, ("harbour",))]
    cosines_and_terms += [(0.01, ("walnut",)), (0.0, ("walnut",))]
    cosines_and_terms += [(-0.1, ()), (-0.2, ()), (-0.3, ())]
    # When
    hits, _ = await search_laid_out(postgres, cosines_and_terms, "lantern harbour walnut")

    # Then
    assert [h.id for h in hits[:3]] == ["fact-00", "fact-20", "fact-01"]
    assert hits[1].score == pytest.approx(0.595, abs=1e-3)


async def test_a_holder_of_every_required_keyword_reaches_the_top(
    postgres: PostgresLocation,
) -> None:
    """With both query keywords required (neither alone lifts a fact outside the vector list to
    the bar), the look-up of the facts holding both finds the one they lift into the top, and
    the holders whose fused score stays under the bar do not change the ranking."""
    # Given: 20 facts without keywords fill the vector list (cosines 0.80 down to 0.76 - 0.74 x
    # the lexical weight W), so the bar is 0.76 and a fact outside needs 0.74 of the keyword
    # weight: both keywords. Outside it: a fact holding both at 0.79 - W (lifted to 0.79), one
    # holding both at 0.51 - W (0.51, under the bar), and facts holding one of them.
    w = LEXICAL_WEIGHT
    bounding = 0.76 - 0.74 * w
    cosines_and_terms: list[tuple[float, tuple[str, ...]]] = [
        (c, ()) for c in [0.80, 0.78, 0.76] + [0.75 - (0.75 - bounding) * i / 16 for i in range(17)]
    ]
    cosines_and_terms += [(0.79 - w, ("lantern", "harbour")), (0.51 - w, ("lantern", "harbour"))]
    cosines_and_terms += [
        (bounding - d, (term,))
        for d, term in ((0.01, "lantern"), (0.02, "harbour"), (0.03, "lantern"), (0.04, "harbour"))
    ]
    cosines_and_terms += [(-0.3, ()), (-0.4, ())]
    # When
    hits, backend = await search_laid_out(postgres, cosines_and_terms, "lantern harbour")

    # Then
    assert [h.id for h in hits[:3]] == ["fact-00", "fact-20", "fact-01"]
    assert hits[1].score == pytest.approx(0.79, abs=1e-3)
    assert backend.searcher.bounded.second_statements == 1


async def searches_again_bound_to_nothing(
    backend: PgvectorMemoryBackend, query: SearchQuery, expected: list[SearchHit]
) -> None:
    """After failed searches: the same search answers as before, and no pooled connection
    stayed bound to the namespace (an unbound one sees no memory)."""
    assert await backend.search(NS, query) == expected
    async with backend.db.unbound() as conn:
        cur = await conn.execute("SELECT count(*) FROM memories")
        assert await cur.fetchone() == (0,)


async def search_laid_out(
    postgres: PostgresLocation, cosines_and_terms: list[tuple[float, tuple[str, ...]]], query: str
) -> tuple[list[SearchHit], PgvectorMemoryBackend]:
    """Searches `query` (along the first axis) over facts at the given cosines holding the given
    keywords; the hits and the backend, whose bounded-search counters the caller may read."""
    async with first_axis_backend(postgres, START) as backend:
        await bulk_load_facts(
            backend.config,
            [
                BulkFact(NS, f"fact-{i:02d}", f"fact {i}", at_cosine(c, i + 1), terms=terms)
                for i, (c, terms) in enumerate(cosines_and_terms)
            ],
        )
        return await backend.search(NS, SearchQuery(query, threshold=0.0)), backend
