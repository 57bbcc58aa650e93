"""Migration 11's promise at the SQL level (ADR 0056): versions are raised once per writing
transaction and become visible in commit order, so a reader that sees version V has every row
stamped V or lower; deletions start a new epoch, TRUNCATE empties the versions, and the
application role cannot write them itself.

The writers here are raw connections of the application role without the namespace's advisory
lock: the order must come from the trigger alone, whatever a future writer forgets to take."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from support.mirrors import EMBEDDER, START

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.mirror.feed import changes
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.types import Namespace
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:versions")
OTHER = Namespace("tenant-1:other")
VECTOR = "[" + ",".join(["1"] + ["0"] * (EMBEDDER.dimension - 1)) + "]"
BLOCKED_FOR_S = 0.5  # how long a writer is watched to stay blocked


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    async with pgvector_backend(
        postgres, embedder=EMBEDDER, extractor=ScriptedExtractor(), clock=ManualClock(START)
    ) as opened:
        yield opened


async def app_connection(
    backend: PgvectorMemoryBackend, ns: Namespace
) -> psycopg.AsyncConnection[Any]:
    """A connection of the application role bound to `ns` for its whole session."""
    conn = await psycopg.AsyncConnection.connect(
        backend.config.app_conninfo,
        autocommit=True,
        options=f"-c search_path={backend.config.schema},public",
    )
    await conn.execute("SELECT set_config('app.namespace', %s, false)", [ns])
    return conn


async def insert(conn: psycopg.AsyncConnection[Any], *ids: str) -> None:
    for fact_id in ids:
        await conn.execute(
            "INSERT INTO memories (namespace, id, text, embedding) "
            "VALUES (current_setting('app.namespace'), %s, %s, %s::vector)",
            [fact_id, f"fact {fact_id}", VECTOR],
        )


async def stamps(backend: PgvectorMemoryBackend, ns: Namespace = NS) -> dict[str, int]:
    """Each row's `changed_in`, as the namespace's owner sees them."""
    async with await psycopg.AsyncConnection.connect(backend.config.admin_conninfo) as conn:
        cur = await conn.execute(
            sql.SQL("SELECT id, changed_in FROM {} WHERE namespace = %s").format(
                sql.Identifier(backend.config.schema, "memories")
            ),
            [ns],
        )
        return {str(i): int(v) for i, v in await cur.fetchall()}


async def seen(backend: PgvectorMemoryBackend, known: int = 0) -> tuple[int, set[str]]:
    """What a mirror's changes round trip sees: the version and the ids stamped after `known`."""
    found = await changes(backend.db, NS, known)
    return found.version, {row["id"] for row in found.rows}


async def test_rows_written_in_one_transaction_share_one_version(
    backend: PgvectorMemoryBackend,
) -> None:
    conn = await app_connection(backend, NS)
    try:
        async with conn.transaction():
            await insert(conn, "a", "b", "c")
            await conn.execute("UPDATE memories SET text = 'again' WHERE id = 'a'")
        async with conn.transaction():
            await insert(conn, "d")
    finally:
        await conn.close()

    assert await stamps(backend) == {"a": 1, "b": 1, "c": 1, "d": 2}
    assert await seen(backend) == (2, {"a", "b", "c", "d"})
    assert await seen(backend, known=1) == (2, {"d"})


async def test_a_rolled_back_writer_leaves_no_gap_that_hides_later_rows(
    backend: PgvectorMemoryBackend,
) -> None:
    conn = await app_connection(backend, NS)
    try:
        async with conn.transaction():
            await insert(conn, "a")
        await conn.execute("BEGIN")
        await insert(conn, "lost")
        await conn.execute("ROLLBACK")  # the writer failed after its version was taken
        async with conn.transaction():
            await insert(conn, "b")
    finally:
        await conn.close()

    assert await stamps(backend) == {"a": 1, "b": 2}
    assert await seen(backend, known=1) == (2, {"b"})


async def test_versions_become_visible_in_commit_order(backend: PgvectorMemoryBackend) -> None:
    first, second = await app_connection(backend, NS), await app_connection(backend, NS)
    try:
        await first.execute("BEGIN")
        await insert(first, "a")
        # The second writer starts while the first is open: its version waits for the first's
        # commit (the versions row's lock), so it cannot commit a version past an open one.
        await second.execute("BEGIN")
        writing = asyncio.create_task(insert(second, "b"))
        await asyncio.sleep(BLOCKED_FOR_S)
        assert not writing.done()
        assert await seen(backend) == (0, set())  # nothing committed: no version seen

        await first.execute("COMMIT")
        await asyncio.wait_for(writing, timeout=10.0)
        assert await seen(backend) == (1, {"a"})  # the second is still open

        await second.execute("COMMIT")
        assert await seen(backend) == (2, {"a", "b"})
        assert await stamps(backend) == {"a": 1, "b": 2}
    finally:
        await first.close()
        await second.close()


async def test_a_reader_that_sees_a_version_sees_every_row_stamped_up_to_it(
    backend: PgvectorMemoryBackend,
) -> None:
    """Many writers at once, a reader polling meanwhile: no read may report a version whose
    rows it does not return (a mirror would skip them for good)."""
    writers = [await app_connection(backend, NS) for _ in range(4)]

    async def write(conn: psycopg.AsyncConnection[Any], n: int) -> None:
        for round_no in range(10):
            async with conn.transaction():
                await insert(conn, f"w{n}-{round_no}-x", f"w{n}-{round_no}-y")

    try:
        writing = asyncio.gather(*(write(conn, n) for n, conn in enumerate(writers)))
        reads = []
        while not writing.done():
            reads.append(await changes(backend.db, NS, 0))
        await writing
    finally:
        for conn in writers:
            await conn.close()

    # The reads overlapped the writes (else they would prove nothing about ordering).
    assert any(0 < read.version < 40 for read in reads)
    final = await stamps(backend)
    assert len(final) == 80
    assert sorted(set(final.values())) == list(range(1, 41))
    for read in reads:
        read_ids = {row["id"] for row in read.rows}
        assert {i for i, v in final.items() if v <= read.version} <= read_ids


async def test_a_delete_starts_a_new_epoch_and_truncate_empties_the_versions(
    backend: PgvectorMemoryBackend,
) -> None:
    conn = await app_connection(backend, NS)
    try:
        await insert(conn, "a", "b")
        before = await changes(backend.db, NS, 0)
        await conn.execute("DELETE FROM memories WHERE id = 'a'")
    finally:
        await conn.close()
    after = await changes(backend.db, NS, 0)
    assert after.epoch != before.epoch
    assert after.version > before.version

    versions = sql.Identifier(backend.config.schema, "memory_versions")
    async with await psycopg.AsyncConnection.connect(
        backend.config.admin_conninfo, autocommit=True
    ) as owner:
        await owner.execute(
            sql.SQL("TRUNCATE {}").format(sql.Identifier(backend.config.schema, "memories"))
        )
        cur = await owner.execute(sql.SQL("SELECT count(*) FROM {}").format(versions))
        assert await cur.fetchone() == (0,)
    assert (await changes(backend.db, NS, 0)).epoch is None


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO memory_versions (namespace, epoch, version) "
        "VALUES ('tenant-1:versions', 1, 99)",
        "UPDATE memory_versions SET version = 99",
        "DELETE FROM memory_versions",
    ],
)
async def test_the_application_role_cannot_write_the_versions(
    backend: PgvectorMemoryBackend, statement: str
) -> None:
    conn = await app_connection(backend, NS)
    try:
        await insert(conn, "a")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute(statement)
    finally:
        await conn.close()
    assert (await changes(backend.db, NS, 0)).version == 1


async def test_a_namespace_reads_only_its_own_version(backend: PgvectorMemoryBackend) -> None:
    conn = await app_connection(backend, OTHER)
    try:
        await insert(conn, "x")
        await insert(conn, "y")
        cur = await conn.execute("SELECT namespace, version FROM memory_versions")
        assert await cur.fetchall() == [(OTHER, 2)]
    finally:
        await conn.close()
    assert await seen(backend) == (0, set())
