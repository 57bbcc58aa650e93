"""pgvector writers keep the kept keyword counts whole (the namespace lock, TRUNCATE, forgetting),
and a search the server dies under answers the port's unavailable error, not a hang (ADR 0030
addendum)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql
from support.crash import CrashablePostgres

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = [pytest.mark.integration, pytest.mark.serial]
NS = Namespace("tenant-1:writers")
EMBEDDER = HashingEmbedder(64)
START = datetime(2026, 1, 1, tzinfo=UTC)
# A search whose server was killed answers within this (the driver sees the socket close).
ANSWER_WITHIN_S = 5.0
HEAL_WITHIN_S = 15.0


EXTRACTOR = ScriptedExtractor()  # scripts are keyed by transcript: tests never share one


async def opened_backend(location: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    async with pgvector_backend(
        location, embedder=EMBEDDER, extractor=EXTRACTOR, clock=ManualClock(START)
    ) as backend:
        yield backend


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    async for opened in opened_backend(postgres):
        yield opened


async def owner_rows(config: PgvectorConfig, statement: str) -> list[tuple[Any, ...]]:
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
        cur = await conn.execute(sql.SQL(statement).format(sql.Identifier(config.schema)))
        return list(await cur.fetchall()) if cur.description else []


async def remember(backend: PgvectorMemoryBackend, doc: str, *texts: str) -> None:
    facts = [
        ExtractedFact(key=f"f{i}", text=text, slot=None, source_indexes=(0,))
        for i, text in enumerate(texts)
    ]
    transcript = EXTRACTOR.script(f"{backend.config.schema} {doc}", *facts)
    await backend.ingest_transcript(NS, doc, transcript, occurred_at=START)


def bulk_fact(n: int) -> BulkFact:
    vector = np.zeros(64, dtype=np.float32)
    vector[n % 64] = 1.0
    return BulkFact(NS, f"bulk-{n}", f"bulk fact {n}", vector, terms=("bulk", "fact"))


async def test_a_bulk_load_waits_for_the_namespace_lock_as_every_writer(
    backend: PgvectorMemoryBackend,
) -> None:
    config = backend.config
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as holder:
        await holder.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('factledger.ns:' || %s, 0))", [NS]
        )
        loading = asyncio.create_task(bulk_load_facts(config, [bulk_fact(n) for n in range(3)]))
        await asyncio.sleep(0.5)
        assert not loading.done()  # waiting for the namespace's writer
        await holder.commit()
    assert await asyncio.wait_for(loading, timeout=10.0) == 3
    [(held,)] = await owner_rows(
        config, "SELECT facts FROM {}.memory_terms WHERE term = 'bulk' AND NOT is_forgotten"
    )
    assert held == 3


async def test_a_truncate_of_memories_empties_the_kept_counts(
    backend: PgvectorMemoryBackend,
) -> None:
    await remember(backend, "d", "calls the supplier weekly", "prefers morning calls")
    assert await owner_rows(backend.config, "SELECT * FROM {}.memory_terms")

    await owner_rows(backend.config, "TRUNCATE {}.memories")

    assert await owner_rows(backend.config, "SELECT * FROM {}.memory_terms") == []
    assert await backend.search(NS, SearchQuery("supplier calls", threshold=0.0)) == []


async def test_forgetting_clears_the_facts_keywords(backend: PgvectorMemoryBackend) -> None:
    await remember(backend, "d", "diagnosed with zebrafinch fever", "prefers morning calls")
    facts = await backend.list_memories(NS)
    forgotten = next(f for f in facts if "zebrafinch" in f.text)

    await backend.forget(NS, [forgotten.id], reason="asked")

    rows = await owner_rows(backend.config, "SELECT id, lexical_terms FROM {}.memories")
    terms = {str(fid): list(held) for fid, held in rows}
    assert terms[forgotten.id] == []
    assert all(held for fid, held in terms.items() if fid != forgotten.id)


async def test_a_search_whose_server_dies_answers_unavailable_then_heals(
    crashable: CrashablePostgres,
) -> None:
    async for backend in opened_backend(crashable.location):
        await remember(backend, "d", "calls the supplier weekly", "prefers morning calls")
        query = SearchQuery("supplier calls", threshold=0.0)
        assert await backend.search(NS, query)
        owner = await psycopg.AsyncConnection.connect(backend.config.admin_conninfo)
        try:
            # The search's statement waits on the table's lock: it is in flight at the server.
            await owner.execute(
                sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(
                    sql.Identifier(backend.config.schema, "memories")
                )
            )
            searching = asyncio.create_task(backend.search(NS, query))
            await asyncio.sleep(0.5)
            assert not searching.done()
            started = time.monotonic()
            await asyncio.to_thread(crashable.kill)

            with pytest.raises(MemoryUnavailableError) as raised:
                await asyncio.wait_for(searching, timeout=ANSWER_WITHIN_S)
            assert time.monotonic() - started < ANSWER_WITHIN_S
            assert isinstance(raised.value.__cause__, psycopg.Error)
        finally:
            await owner.close()
        await asyncio.to_thread(crashable.restart)
        deadline = time.monotonic() + HEAL_WITHIN_S
        while True:
            try:
                assert await backend.search(NS, query)
                break
            except MemoryUnavailableError:
                assert time.monotonic() < deadline, "the pool did not heal"
                await asyncio.sleep(0.2)
