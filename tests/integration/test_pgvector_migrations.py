"""pgvector backend: versioned migrations, safe when several processes start at once."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.pgvector.schema import MIGRATIONS, SchemaOptions, apply_migrations
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import MemoryUnavailableError
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import drop_schema, fresh_schema
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = pytest.mark.integration

# A separate interpreter applying the same migrations: another process, another session.
CHILD = """
import asyncio, sys
from factledger.adapters.pgvector.schema import SchemaOptions, apply_migrations
options = SchemaOptions(sys.argv[2], sys.argv[3], 64, create_app_role=True)
print(",".join(map(str, asyncio.run(apply_migrations(sys.argv[1], options)))))
"""


def options(config: PgvectorConfig) -> SchemaOptions:
    return SchemaOptions(config.schema, config.app_role, 64, create_app_role=True)


async def recorded_versions(config: PgvectorConfig) -> list[int]:
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
        cur = await conn.execute(
            sql.SQL("SELECT version FROM {} ORDER BY version").format(
                sql.Identifier(config.schema, "schema_migrations")
            )
        )
        return [row[0] for row in await cur.fetchall()]


async def child_process(config: PgvectorConfig) -> list[int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD,
        config.admin_conninfo,
        config.schema,
        config.app_role,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    return [int(v) for v in out.decode().strip().split(",") if v]


async def test_processes_and_tasks_migrating_at_once_apply_each_version_once(
    postgres: PostgresLocation,
) -> None:
    config = await fresh_schema(postgres)
    try:
        results = await asyncio.gather(
            child_process(config),
            child_process(config),
            *(apply_migrations(config.admin_conninfo, options(config)) for _ in range(4)),
        )
        applied = sorted(v for result in results for v in result)

        assert applied == [version for version, _, _ in MIGRATIONS]
        assert await recorded_versions(config) == applied
    finally:
        await drop_schema(config)


async def test_a_restart_applies_nothing_and_keeps_the_data(postgres: PostgresLocation) -> None:
    config = await fresh_schema(postgres)
    try:
        first = await apply_migrations(config.admin_conninfo, options(config))
        second = await apply_migrations(config.admin_conninfo, options(config))

        assert first == [version for version, _, _ in MIGRATIONS]
        assert second == []
    finally:
        await drop_schema(config)


async def test_an_embedder_of_another_dimension_is_refused(postgres: PostgresLocation) -> None:
    config = await fresh_schema(postgres)
    deps = {"extractor": ScriptedExtractor(), "clock": ManualClock()}
    try:
        backend = await PgvectorMemoryBackend.open(config, embedder=HashingEmbedder(64), **deps)
        await backend.close()

        with pytest.raises(MemoryUnavailableError):
            await PgvectorMemoryBackend.open(config, embedder=HashingEmbedder(32), **deps)
    finally:
        await drop_schema(config)


async def test_an_unreachable_server_is_a_port_error_naming_no_connection_details(
    postgres: PostgresLocation,
) -> None:
    config = await fresh_schema(postgres)
    missing = replace(postgres, dbname="no_such_database").conninfo
    config = replace(config, admin_conninfo=missing)

    with pytest.raises(MemoryUnavailableError) as caught:
        await PgvectorMemoryBackend.open(
            config, embedder=HashingEmbedder(64), extractor=ScriptedExtractor(), clock=ManualClock()
        )

    assert "no_such_database" not in str(caught.value)
    assert isinstance(caught.value.__cause__, psycopg.Error)
