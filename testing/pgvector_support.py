"""Helpers for tests that run the pgvector backend on the embedded server.

Each backend gets its own schema (created by the migrations), so tests never see each other's
rows while sharing one server and one database.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg import sql

from factledger.adapters.embedded_postgres import PostgresLocation
from factledger.adapters.pgvector_backend import PgvectorMemoryBackend
from factledger.adapters.pgvector_config import PgvectorConfig, embedded_config, ensure_database
from factledger.application.ports import Clock, Embedder, Extractor

TEST_DATABASE = "factledger_pgvector_tests"


def fresh_config(location: PostgresLocation, *, pool_max: int = 4) -> PgvectorConfig:
    """A config on the shared test database with a schema no other test uses."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    return embedded_config(location, dbname=TEST_DATABASE, schema=schema, pool_max=pool_max)


@asynccontextmanager
async def pgvector_backend(
    location: PostgresLocation,
    *,
    embedder: Embedder,
    extractor: Extractor,
    clock: Clock,
    config: PgvectorConfig | None = None,
) -> AsyncIterator[PgvectorMemoryBackend]:
    """Opens a backend on a fresh schema, closes it and drops the schema afterwards."""
    await ensure_database(location, TEST_DATABASE)
    config = config or fresh_config(location)
    backend = await PgvectorMemoryBackend.open(
        config, embedder=embedder, extractor=extractor, clock=clock
    )
    try:
        yield backend
    finally:
        await backend.close()
        await drop_schema(config)


async def drop_schema(config: PgvectorConfig) -> None:
    async with await psycopg.AsyncConnection.connect(
        config.admin_conninfo, autocommit=True
    ) as conn:
        await conn.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(config.schema))
        )
