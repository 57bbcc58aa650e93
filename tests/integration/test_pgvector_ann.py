"""pgvector backend: a large namespace gets its own partial HNSW index, and only it uses it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from typer.testing import CliRunner

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.ann import AnnSettings, index_name
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.cli.main import app
from factledger.api.cli.sync import ann_maintenance
from factledger.api.settings import load_settings
from factledger.application.memory.types import Namespace, SearchQuery
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


async def _valid_index(backend: PgvectorMemoryBackend, name: str) -> bool | None:
    async with await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn:
        cur = await conn.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = %s",
            [backend.config.schema, name],
        )
        row = await cur.fetchone()
    return None if row is None else bool(row[0])


async def test_maintenance_already_running_elsewhere_is_skipped_not_doubled(
    backend: PgvectorMemoryBackend,
) -> None:
    lock_key = f"{backend.config.schema}.ann"
    async with await psycopg.AsyncConnection.connect(
        backend.config.admin_conninfo, autocommit=True
    ) as other_worker:
        await other_worker.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [lock_key])

        busy = await backend.maintain_ann_indexes(SETTINGS)

        await other_worker.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [lock_key])
    done = await backend.maintain_ann_indexes(SETTINGS)

    assert busy.busy
    assert busy.created == {}
    assert await _valid_index(backend, index_name(BIG)) is True
    assert not done.busy
    assert list(done.created) == [BIG]


async def test_an_index_left_invalid_by_a_cut_short_build_is_rebuilt(
    backend: PgvectorMemoryBackend,
) -> None:
    await backend.maintain_ann_indexes(SETTINGS)
    name = index_name(BIG)
    async with await psycopg.AsyncConnection.connect(
        backend.config.admin_conninfo, autocommit=True
    ) as conn:
        # What a build killed half way leaves: an invalid index and no bookkeeping row.
        await conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [f"{backend.config.schema}.{name}"],
        )
        await conn.execute(
            sql.SQL("DELETE FROM {} WHERE namespace = %s").format(
                sql.Identifier(backend.config.schema, "ann_indexes")
            ),
            [BIG],
        )
    assert await _valid_index(backend, name) is False

    report = await backend.maintain_ann_indexes(SETTINGS)

    assert list(report.created) == [BIG]
    assert await _valid_index(backend, name) is True


async def test_the_sync_worker_maintains_the_indexes_on_its_timer(
    backend: PgvectorMemoryBackend,
) -> None:
    settings = load_settings(
        backend={"kind": "pgvector", "ann_min_facts": 1_000, "ann_maintenance_interval_s": 0.05}
    )
    stop = asyncio.Event()

    task = ann_maintenance(settings, backend, stop)
    assert task is not None
    for _ in range(200):
        if await _valid_index(backend, index_name(BIG)):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, timeout=10)

    assert await _valid_index(backend, index_name(BIG)) is True
    assert await _valid_index(backend, index_name(SMALL)) is None


async def test_no_timer_without_an_interval_or_on_another_backend(
    backend: PgvectorMemoryBackend,
) -> None:
    off = load_settings(backend={"kind": "pgvector", "ann_maintenance_interval_s": 0})
    in_memory = load_settings(backend={"kind": "in_memory"})

    assert ann_maintenance(off, backend, asyncio.Event()) is None
    assert ann_maintenance(in_memory, backend, asyncio.Event()) is None


def test_the_maintain_command_builds_the_index_of_the_large_subject(
    backend: PgvectorMemoryBackend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = backend.config
    for name, value in {
        "FACTLEDGER_DATA_DIR": str(tmp_path),
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        "FACTLEDGER_BACKEND__DSN": config.app_conninfo,
        "FACTLEDGER_BACKEND__ADMIN_DSN": config.admin_conninfo,
        "FACTLEDGER_BACKEND__SCHEMA_NAME": config.schema,
        "FACTLEDGER_BACKEND__APP_ROLE": config.app_role,
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
        "FACTLEDGER_EMBEDDER__DIMENSION": str(EMBEDDER.dimension),
    }.items():
        monkeypatch.setenv(name, value)

    result = CliRunner().invoke(app, ["pgvector", "maintain", "--min-facts", "1000"])

    assert result.exit_code == 0, result.output
    assert f"created\t{BIG}\t" in result.output
    assert "1 created, 0 dropped" in result.output


def test_the_maintain_command_refuses_another_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_BACKEND__KIND", "in_memory")

    result = CliRunner().invoke(app, ["pgvector", "maintain"])

    assert result.exit_code == 2
    assert "not pgvector" in result.output
