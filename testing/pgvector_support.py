"""Helpers for tests that run the pgvector backend on the embedded server.

- `pgvector_backend(..., shared=True)` (the contract suite) reuses one migrated schema per
  embedding dimension and empties its tables before each test: ~10x cheaper than migrating.
- `shared=False` (and `fresh_config`) gives a schema no other test uses, for tests that need
  their own migrations, roles or several backends at once.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import psycopg
from psycopg import sql

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import PgvectorConfig, embedded_config, ensure_database
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.schema import NAMESPACED_TABLES
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.clocks import Clock
from factledger.application.memory.ports import Embedder, Extractor

TEST_DATABASE = "factledger_pgvector_tests"


def fresh_config(location: PostgresLocation, *, pool_max: int = 4) -> PgvectorConfig:
    """A config on the shared test database with a schema no other test uses."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    return embedded_config(location, dbname=TEST_DATABASE, schema=schema, pool_max=pool_max)


async def fresh_schema(location: PostgresLocation, *, pool_max: int = 4) -> PgvectorConfig:
    """`fresh_config`, with the test database created if this is the first test to need it."""
    await ensure_database(location, TEST_DATABASE)
    return fresh_config(location, pool_max=pool_max)


@asynccontextmanager
async def pgvector_backend(
    location: PostgresLocation,
    *,
    embedder: Embedder,
    extractor: Extractor,
    clock: Clock,
    config: PgvectorConfig | None = None,
    shared: bool = False,
    mirror: MirrorSettings | None = None,
) -> AsyncIterator[PgvectorMemoryBackend]:
    """Opens a backend on empty tables; a private schema is dropped afterwards.

    Searches read the database unless `mirror` says otherwise: a mirror loaded in the
    background would make what a test exercises depend on timing (the mirror's tests and the
    contract suite's "pgvector-mirrored" pass `MirrorSettings(inline=True, earn_after=1)`)."""
    await ensure_database(location, TEST_DATABASE)
    if shared:
        config = embedded_config(
            location, dbname=TEST_DATABASE, schema=f"shared_{embedder.dimension}"
        )
    config = config or fresh_config(location)
    search = replace(config.search, mirror=mirror or MirrorSettings(budget_mb=0))
    config = replace(config, search=search)
    backend = await PgvectorMemoryBackend.open(
        config, embedder=embedder, extractor=extractor, clock=clock
    )
    try:
        if shared:
            await empty_tables(config)
        yield backend
    finally:
        await backend.close()
        if not shared:
            await drop_schema(config)


async def empty_tables(config: PgvectorConfig) -> None:
    # The kept keyword counts are emptied by `memories`' TRUNCATE trigger (migration 7).
    tables = sql.SQL(", ").join(sql.Identifier(config.schema, table) for table in NAMESPACED_TABLES)
    async with await psycopg.AsyncConnection.connect(
        config.admin_conninfo, autocommit=True
    ) as conn:
        await conn.execute(sql.SQL("TRUNCATE {}").format(tables))


async def drop_schema(config: PgvectorConfig) -> None:
    async with await psycopg.AsyncConnection.connect(
        config.admin_conninfo, autocommit=True
    ) as conn:
        await conn.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(config.schema))
        )
