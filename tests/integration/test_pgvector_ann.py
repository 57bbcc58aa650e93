"""pgvector backend: a large namespace gets its own partial HNSW index, and only it uses it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import psycopg
import pytest

from factledger.adapters.embedded_postgres import PostgresLocation
from factledger.adapters.hashing_embedder import HashingEmbedder
from factledger.adapters.pgvector_ann import AnnSettings, index_name
from factledger.adapters.pgvector_backend import PgvectorMemoryBackend
from factledger.adapters.pgvector_bulk import BulkFact, bulk_load_facts
from factledger.application.memory_types import Namespace, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = pytest.mark.integration
BIG, SMALL = Namespace("subject-big"), Namespace("subject-small")
WORDS = [
    "tea",
    "coffee",
    "dog",
    "cat",
    "leeds",
    "london",
    "bakery",
    "supplier",
    "budget",
    "garden",
    "piano",
    "tennis",
    "email",
    "phone",
    "march",
    "sunday",
    "car",
    "bike",
    "train",
    "school",
    "invoice",
    "warehouse",
    "daughter",
    "holiday",
]
SETTINGS = AnnSettings(min_facts=1_000, m=8, ef_construction=32)
EMBEDDER = HashingEmbedder(64)


def sentences(seed: int, count: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.sample(WORDS, 4)) for _ in range(count)]


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    async with pgvector_backend(
        postgres, embedder=EMBEDDER, extractor=ScriptedExtractor(), clock=ManualClock()
    ) as backend:
        facts = [
            BulkFact(ns, f"{ns}-{i}", text, vector)
            for ns, count in ((BIG, 1_200), (SMALL, 80))
            for i, (text, vector) in enumerate(
                zip(
                    sentences(count, count),
                    EMBEDDER.embed_sync(sentences(count, count)),
                    strict=True,
                )
            )
        ]
        await bulk_load_facts(backend.config, facts)
        yield backend


async def test_only_the_namespace_past_the_threshold_gets_an_index_and_uses_it(
    backend: PgvectorMemoryBackend,
) -> None:
    query = SearchQuery("tea dog leeds", threshold=0.0)

    report = await backend.maintain_ann_indexes(SETTINGS)
    big_plan = await backend.explain_search(BIG, query)
    small_plan = await backend.explain_search(SMALL, query)

    assert list(report.created) == [BIG]
    assert index_name(BIG) in big_plan
    assert "hnsw" not in small_plan
    assert index_name(BIG) not in small_plan


async def test_approximate_search_finds_what_exact_search_finds(
    backend: PgvectorMemoryBackend,
) -> None:
    queries = [SearchQuery(text, threshold=0.0, limit=3) for text in sentences(7, 20)]
    exact = [[round(h.score, 5) for h in await backend.search(BIG, q)] for q in queries]

    await backend.maintain_ann_indexes(SETTINGS)
    approximate = [[round(h.score, 5) for h in await backend.search(BIG, q)] for q in queries]

    # Ties are common with short texts, so compare the scores found, not the ids.
    found = sum(len(set(a) & set(e)) for a, e in zip(approximate, exact, strict=True))
    assert found / sum(len(set(e)) for e in exact) >= 0.9


async def test_a_dropped_namespace_loses_its_index_at_the_next_maintenance(
    backend: PgvectorMemoryBackend,
) -> None:
    await backend.maintain_ann_indexes(SETTINGS)

    await backend.drop_namespace(BIG)
    report = await backend.maintain_ann_indexes(SETTINGS)

    async with await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
            [backend.config.schema, index_name(BIG)],
        )
        remaining = await cur.fetchone()
    assert report.created == {}
    assert remaining == (0,)
