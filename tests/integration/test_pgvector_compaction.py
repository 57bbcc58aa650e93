"""The worker's compaction round (ADR 0015): a forgotten fact's words are in no data file of the
backend's schema once it ran, and a writer is never left queued behind a compaction that waits
for a table's lock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest
from support.mirrors import TwoProcesses, two_processes

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.cli.sync import compaction
from factledger.api.http.metrics import ApiMetrics
from factledger.api.settings import PgvectorBackendSettings, load_settings
from factledger.application.memory.types import Namespace

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:compaction")
CANARY = "Quillfeather Marmalade"  # distinctive words that no other text of the test contains
BOUND_S = 30.0  # generous: the rounds take well under a second on an idle machine


@pytest.fixture
async def two(postgres: PostgresLocation) -> AsyncIterator[TwoProcesses]:
    async with two_processes(postgres) as opened:
        await opened.remember(NS, "d0", "orders from the supplier every monday")
        yield opened


def files_holding(backend: PgvectorMemoryBackend, canary: str) -> list[str]:
    """The relations of the backend's schema (tables, indexes, TOAST) whose data file holds the
    canary's bytes, after a checkpoint has written every page out."""
    with psycopg.connect(backend.config.admin_conninfo, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        rows = conn.execute(
            "SELECT c.relname, pg_read_binary_file(pg_relation_filepath(c.oid)) "
            "FROM pg_class c WHERE pg_relation_filepath(c.oid) IS NOT NULL AND ("
            " c.relnamespace = %(schema)s::regnamespace"
            " OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = "
            "  %(schema)s::regnamespace)"
            " OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class t"
            "  ON t.reltoastrelid = i.indrelid WHERE t.relnamespace = %(schema)s::regnamespace))",
            {"schema": backend.config.schema},
        ).fetchall()
    return sorted(name for name, data in rows if canary.encode() in bytes(data))


async def forgotten_canary(two: TwoProcesses) -> None:
    canary = await two.remember(NS, "d1", f"the supplier's owner is {CANARY}")
    await two.writer.forget(NS, [canary], reason="erasure")


async def test_the_scheduled_compaction_leaves_no_byte_of_a_forgotten_fact(
    two: TwoProcesses,
) -> None:
    await forgotten_canary(two)
    # The prune that ran with the forget made the row unreachable, but its bytes are still in
    # the page: why the compaction rewrites rather than running a plain VACUUM.
    assert "memories" in files_holding(two.writer, CANARY)
    assert "memories" in two.writer.upkeep.pending
    settings = load_settings(backend={"kind": "pgvector", "compaction_interval_s": 0.05})
    stop = asyncio.Event()

    task = compaction(settings, two.writer, stop)
    assert task is not None
    for _ in range(int(BOUND_S / 0.05)):
        if not two.writer.upkeep.pending:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, timeout=BOUND_S)

    assert two.writer.upkeep.pending == ()

    assert files_holding(two.writer, CANARY) == []


async def test_the_shared_record_shows_the_backlog_until_the_round_and_then_the_round(
    two: TwoProcesses,
) -> None:
    """The worker serves no metrics: the API's `/metrics` reads this record, from any process."""
    before = await two.mirrored.compaction_status()
    await forgotten_canary(two)
    waiting = await two.mirrored.compaction_status()
    assert waiting.oldest_pending_at is not None
    assert waiting.pending_tables >= 1
    assert waiting.last_compacted_at == before.last_compacted_at

    await two.writer.compact_erased()
    done = await two.mirrored.compaction_status()
    assert done.oldest_pending_at is None
    assert done.pending_tables == 0
    assert done.last_compacted_at is not None
    assert done.last_compacted_at >= waiting.oldest_pending_at
    metrics = ApiMetrics().render(compaction=done, now=datetime.now(UTC)).decode()
    assert gauge(metrics, "factledger_erasure_compaction_backlog_seconds") == 0
    last = gauge(metrics, "factledger_erasure_compaction_last_timestamp_seconds")
    assert last == pytest.approx(done.last_compacted_at.timestamp())


def gauge(metrics: str, name: str) -> float:
    return next(float(line.split()[1]) for line in metrics.splitlines() if line.startswith(name))


async def test_no_timer_without_an_interval_or_on_another_backend(two: TwoProcesses) -> None:
    off = load_settings(backend={"kind": "pgvector", "compaction_interval_s": 0})
    in_memory = load_settings(backend={"kind": "in_memory"})

    default = load_settings(backend={"kind": "pgvector"}).backend
    assert isinstance(default, PgvectorBackendSettings)
    assert default.compaction_interval_s == 900.0
    assert compaction(off, two.writer, asyncio.Event()) is None
    assert compaction(in_memory, two.writer, asyncio.Event()) is None


async def _waiting_for_memories(backend: PgvectorMemoryBackend) -> None:
    """Returns once a lock request on the schema's `memories` table is queued, not granted."""
    query = (
        "SELECT count(*) FROM pg_locks WHERE NOT granted "
        "AND relation = %s::regclass AND mode = 'AccessExclusiveLock'"
    )
    table = f'"{backend.config.schema}".memories'
    async with (
        await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn,
        asyncio.timeout(BOUND_S),
    ):
        while True:
            row = await (await conn.execute(query, (table,))).fetchone()
            await conn.rollback()
            if row is not None and row[0] > 0:
                return
            await asyncio.sleep(0.01)


async def test_a_writer_is_not_left_queued_behind_a_compaction_waiting_for_its_lock(
    two: TwoProcesses,
) -> None:
    await forgotten_canary(two)
    schema = two.writer.config.schema
    # Another writer's transaction, still open, holds the lock every write of `memories` takes.
    async with await psycopg.AsyncConnection.connect(two.writer.config.admin_conninfo) as other:
        await other.execute(f'LOCK TABLE "{schema}".memories IN ROW EXCLUSIVE MODE')
        # Long enough for the test to see the rewrite's request queued on a loaded machine.
        compacting = asyncio.create_task(two.writer.compact_erased(lock_timeout_ms=3_000))
        await _waiting_for_memories(two.writer)

        # A rewrite that waited on and on would hold up this write until `other` ends: every
        # lock request queues behind the rewrite's. It gives up instead, and the write is done.
        written = await asyncio.wait_for(
            two.remember(NS, "d2", "the supplier delivers on fridays"), timeout=BOUND_S
        )
        compacted = await asyncio.wait_for(compacting, timeout=BOUND_S)
        await other.rollback()

    assert written
    assert "memories" not in compacted
    assert "memories" in two.writer.upkeep.pending
    # The next round, with the way clear, rewrites it.
    assert "memories" in await two.writer.compact_erased()
    assert two.writer.upkeep.pending == ()
    assert files_holding(two.writer, CANARY) == []
