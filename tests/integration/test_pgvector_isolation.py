"""pgvector backend: isolation is structural (RLS on a non-owner role), not a WHERE clause."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.types import Namespace
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import drop_schema, fresh_schema, pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

pytestmark = pytest.mark.integration
A = Namespace("tenant-1:subject-a")
B = Namespace("tenant-1:subject-b")


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    extractor = ScriptedExtractor()
    async with pgvector_backend(
        postgres, embedder=HashingEmbedder(64), extractor=extractor, clock=ManualClock()
    ) as backend:
        clock = ManualClock()
        for ns, word in ((A, "alpha"), (B, "beta")):
            transcript = extractor.script(f"{word} said", stated("f0", f"Likes {word}"))
            await backend.ingest_transcript(ns, "doc-1", transcript, occurred_at=clock.now())
            await backend.put_record(ns, "rec-1", "note", f'{{"w": "{word}"}}')
        yield backend


async def test_an_unfiltered_select_bound_to_a_returns_only_a_rows(
    backend: PgvectorMemoryBackend,
) -> None:
    async with backend.db.bound(A) as conn:
        memories = await (await conn.execute("SELECT namespace, text FROM memories")).fetchall()
        tables = {}
        for table in ("documents", "records", "chunks"):
            cur = await conn.execute(
                sql.SQL("SELECT DISTINCT namespace FROM {}").format(sql.Identifier(table))
            )
            tables[table] = await cur.fetchall()

    assert memories == [(A, "Likes alpha")]
    assert tables == {"documents": [(A,)], "records": [(A,)], "chunks": [(A,)]}


async def test_a_transaction_bound_to_no_namespace_sees_nothing(
    backend: PgvectorMemoryBackend,
) -> None:
    async with backend.db.unbound() as conn:
        rows = await (await conn.execute("SELECT count(*) FROM memories")).fetchone()

    assert rows == (0,)


async def test_writing_a_row_of_another_namespace_is_refused(
    backend: PgvectorMemoryBackend,
) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        async with backend.db.bound(A) as conn:
            await conn.execute(
                "INSERT INTO records (namespace, record_id, kind, body_json, body) "
                "VALUES (%s, 'sneaky', 'note', '{}', '{}')",
                [B],
            )


async def test_the_app_role_cannot_switch_row_security_off(
    backend: PgvectorMemoryBackend,
) -> None:
    async with backend.db.bound(A) as conn:
        await conn.execute("SET LOCAL row_security = off")
        # With row security off, a query that a policy would filter fails instead.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute("SELECT * FROM memories")
    async with backend.db.unbound() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute("ALTER TABLE memories DISABLE ROW LEVEL SECURITY")


async def test_updates_through_another_namespace_touch_nothing(
    backend: PgvectorMemoryBackend,
) -> None:
    async with backend.db.bound(B) as conn:
        cur = await conn.execute("UPDATE memories SET text = 'overwritten'")
        updated = cur.rowcount
        cur = await conn.execute("DELETE FROM records")
        deleted = cur.rowcount

    assert updated == 1  # B's own fact only
    assert deleted == 1
    assert [m.text for m in await backend.list_memories(A)] == ["Likes alpha"]
    assert (await backend.get_record(A, "rec-1")).body_json == '{"w": "alpha"}'


async def test_the_backend_refuses_to_serve_as_the_table_owner(
    postgres: PostgresLocation,
) -> None:
    config = await fresh_schema(postgres)
    config = replace(config, app_conninfo=config.admin_conninfo)

    try:
        with pytest.raises(MemoryUnavailableError) as caught:
            await PgvectorMemoryBackend.open(
                config,
                embedder=HashingEmbedder(64),
                extractor=ScriptedExtractor(),
                clock=ManualClock(),
            )
    finally:
        await drop_schema(config)

    assert "row-level security" in str(caught.value)
