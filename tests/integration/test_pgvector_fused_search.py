"""pgvector memories mode ranked in the database, in one statement (ADR 0050): the same hits,
scores and order as the process's mirror (ADR 0056), which ranks every visible fact in Python,
on the edges of the bound and of visibility; filtered searches keep their own path."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from factledger.adapters.pgvector import searcher as searcher_module
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import MemoryBackendError
from factledger.application.memory.types import (
    Condition,
    FilterOp,
    Namespace,
    SearchHit,
    SearchQuery,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

from .test_pgvector_keyword_bound import (
    COMMON,
    EMBEDDER,
    NS,
    OTHER,
    RARE,
    SCORE_ULP,
    START,
    ingest,
    search_laid_out,
    searches_again_bound_to_nothing,
)

pytestmark = pytest.mark.integration
SMALL = Namespace("tenant-1:small")
Opened = tuple[PgvectorMemoryBackend, ScriptedExtractor, ManualClock]


@pytest.fixture
async def opened(postgres: PostgresLocation) -> AsyncIterator[Opened]:
    """NS: 240 facts, some superseded (slots), inferred, forgotten and expired unflagged;
    OTHER: the same texts under other ids; SMALL: 30 facts, fewer than any vector list."""
    extractor, clock = ScriptedExtractor(), ManualClock(START)
    async with pgvector_backend(
        postgres, embedder=EMBEDDER, extractor=extractor, clock=clock
    ) as backend:
        for n in range(8):
            await ingest(backend, extractor, NS, f"doc-{n}", slots=n % 2 == 0)
        await ingest(backend, extractor, OTHER, "doc-0")
        await ingest(backend, extractor, SMALL, "doc-9")
        listed = await backend.list_memories(NS, limit=60)
        await backend.forget(NS, [fact.id for fact in listed[1::9]], reason="asked")
        for fact in listed[::8]:  # expired, not flagged forgotten
            await backend.expire(NS, fact.id, at=clock.now() - timedelta(seconds=1))
        yield backend, extractor, clock


def _as_if(backend: PgvectorMemoryBackend, monkeypatch: pytest.MonkeyPatch, indexed: bool) -> None:
    # With no index built the vector list is exact either way; "indexed" writes the namespace
    # as a literal and reads the deeper list, as for a partial index.
    async def has_ann(_: Namespace) -> bool:
        return indexed

    monkeypatch.setattr(backend.searcher, "has_ann", has_ann)


async def both_forms(
    opened: Opened, ns: Namespace, query: SearchQuery
) -> tuple[list[SearchHit], list[SearchHit]]:
    """The hits of the one statement and the mirror's for the same query, the mirror's with
    the hit past the limit, if any (a tie across the cut-off may come back either way)."""
    backend, _, clock = opened
    plan = replace(backend.searcher.plan, mirror=MirrorSettings(inline=True, earn_after=1))
    mirror = PgvectorSearcher(backend.db, embedder=EMBEDDER, clock=clock, plan=plan)
    fused = await backend.search(ns, query)
    if query.filters:  # a filtered search never reads the mirror: the database's other path
        return fused, await mirror.search(ns, query)
    return fused, await mirror.search(ns, replace(query, limit=query.limit + 1))


def assert_same_answer(fused: list[SearchHit], mirrored: list[SearchHit]) -> None:
    """The same scores in order (within float arithmetic's last places: PostgreSQL's cosine
    against numpy's), the same ids wherever a score has no near-tie, and the same hit for each
    id both return."""
    everything, mirrored = mirrored, mirrored[: len(fused)] if fused else []
    assert len(everything) in (len(fused), len(fused) + 1)
    assert [h.score for h in fused] == pytest.approx([h.score for h in mirrored], abs=SCORE_ULP)
    for i, hit in enumerate(fused):
        others = [o.score for j, o in enumerate(everything) if j != i]
        if all(abs(hit.score - other) > SCORE_ULP for other in others):
            assert hit.id == mirrored[i].id
    by_id = {h.id: h for h in everything}
    for hit in fused:
        if hit.id in by_id:
            assert answer([hit])[0][2:] == answer([by_id[hit.id]])[0][2:]


def answer(hits: list[SearchHit]) -> list[tuple[Any, ...]]:
    return [(h.id, h.score, h.text, h.is_forgotten, h.relations, h.metadata) for h in hits]


QUERIES = [
    "team office",  # every keyword common
    " ".join(COMMON),  # every common keyword at once
    "zzqx unheardof",  # no keyword held by any fact
    "word007 word011 supplier",  # rare and common
    "word003 qqq morning invoices",  # one keyword held by none
    "prefers weekly calls word100",
]


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"include_superseded": True},
        {"include_inferred": True},
        {"include_forgotten": True},
        {"include_superseded": True, "include_inferred": True, "include_forgotten": True},
    ],
    ids=["current", "superseded", "inferred", "forgotten", "all"],
)
async def test_the_one_statement_answers_as_the_mirror(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, indexed: bool, flags: dict[str, bool]
) -> None:
    backend, _, _ = opened
    _as_if(backend, monkeypatch, indexed)
    rnd = random.Random(11)
    queries = [*QUERIES, *(" ".join(rnd.sample([*COMMON, *RARE[:20]], 3)) for _ in range(6))]
    for text in queries:
        for limit, threshold in ((3, 0.0), (10, 0.0), (5, 0.3), (1, -1.0)):
            query = SearchQuery(text, threshold=threshold, limit=limit, **flags)

            fused, mirrored = await both_forms(opened, NS, query)

            assert_same_answer(fused, mirrored)
            if threshold <= 0.0:
                assert fused  # every visible fact scores at least its cosine


@pytest.mark.parametrize("indexed", [True, False])
async def test_a_threshold_above_every_score_finds_nothing_either_way(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    backend, _, _ = opened
    _as_if(backend, monkeypatch, indexed)

    query = SearchQuery("team office word007", threshold=0.9999)
    fused, mirrored = await both_forms(opened, NS, query)

    assert fused == mirrored == []


@pytest.mark.parametrize("indexed", [True, False])
async def test_a_namespace_smaller_than_the_vector_list(
    opened: Opened, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    backend, _, _ = opened
    _as_if(backend, monkeypatch, indexed)
    for limit in (3, 10, 40):
        query = SearchQuery("team morning word007", threshold=0.0, limit=limit)

        fused, mirrored = await both_forms(opened, SMALL, query)

        assert_same_answer(fused, mirrored)
        assert len(fused) == min(limit, 24)  # 30 facts, 6 of them inferences


async def test_the_one_statement_sees_the_bound_namespace_only(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, _, _ = opened
    _as_if(backend, monkeypatch, True)
    own = {fact.id for fact in await backend.list_memories(SMALL, limit=100)}

    query = SearchQuery(" ".join(COMMON), threshold=0.0, limit=40, include_inferred=True)
    hits = await backend.search(SMALL, query)

    assert {h.id for h in hits} == own


async def test_a_filtered_search_keeps_its_own_path(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, _, _ = opened
    _as_if(backend, monkeypatch, True)
    searches = backend.searcher.bounded.searches
    query = SearchQuery(
        "team office", threshold=0.0, limit=5, filters=Condition("x", FilterOp.EQ, "y")
    )

    fused, database = await both_forms(opened, NS, query)

    assert fused == database
    assert backend.searcher.bounded.searches == searches  # not a bounded search


async def test_the_one_statement_counts_the_searches_its_bound_admits_holders_in(
    postgres: PostgresLocation,
) -> None:
    """A fact outside the vector list that its keywords lift into the top is found, and the
    search counts as one whose bound admitted holders (the bench's counters)."""
    cosines = [(0.60 - i * 0.01, ()) for i in range(20)] + [(0.2, ("lantern", "harbour"))]
    hits, backend = await search_laid_out(postgres, cosines, "lantern harbour")

    assert hits[0].id == "fact-20"
    counts = backend.searcher.bounded
    assert (counts.searches, counts.second_statements, counts.holders) == (1, 1, 1)


async def test_a_failing_statement_fails_the_search_and_leaves_the_pool_usable(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend, _, _ = opened
    query = SearchQuery("team office morning", threshold=0.0)
    expected = await backend.search(NS, query)

    with monkeypatch.context() as patched:
        patched.setattr(searcher_module, "fused_statement", lambda _: b"SELECT 1 / 0")
        for _ in range(6):  # more searches than the pool has connections
            with pytest.raises(MemoryBackendError):
                await backend.search(NS, query)

    await searches_again_bound_to_nothing(backend, query, expected)
