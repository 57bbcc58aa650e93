"""`ImportPositions` in PostgreSQL, in the event store's schema: every API process and CLI
run against the same database sees one position per import."""

from __future__ import annotations

from typing import Any, cast

from psycopg.types.json import Jsonb

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.tables import Cursor, PostgresTables
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.application.importing.positions import (
    ImportPosition,
    ImportPositionsUnavailableError,
)

_SCHEMA = """CREATE TABLE IF NOT EXISTS {schema}.import_positions (
    tenant text NOT NULL, import_id text NOT NULL, line bigint NOT NULL, digest text NOT NULL,
    report jsonb NOT NULL, finished boolean NOT NULL, PRIMARY KEY (tenant, import_id))"""
# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (StoreMigration("0001-tables", (_SCHEMA,)),)
# A position moves forward only: a twin that is behind never moves it back.
_SAVE = """INSERT INTO {schema}.import_positions AS p VALUES (%s, %s, %s, %s, %s, %s)
    ON CONFLICT (tenant, import_id) DO UPDATE SET line = excluded.line,
    digest = excluded.digest, report = excluded.report, finished = excluded.finished
    WHERE p.line <= excluded.line
    RETURNING 1"""
_GET = """SELECT line, digest, report, finished FROM {schema}.import_positions
    WHERE tenant = %s AND import_id = %s"""


class PostgresImportPositions:
    """Build it with `await PostgresImportPositions.connect(dsn, schema=...)`."""

    def __init__(self, tables: PostgresTables) -> None:
        self._tables = tables

    @classmethod
    async def connect(
        cls, conninfo: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> PostgresImportPositions:
        tables = await PostgresTables.open(
            conninfo,
            schema=schema,
            pool=pool,
            error=lambda: ImportPositionsUnavailableError("postgres import positions failed"),
            store="import_positions",
            migrations=MIGRATIONS,
        )
        return cls(tables)

    async def get(self, tenant: str, import_id: str) -> ImportPosition | None:
        async def work(cur: Cursor) -> ImportPosition | None:
            await cur.execute(self._tables.q(_GET), (tenant, import_id))
            row = await cur.fetchone()
            if row is None:
                return None
            report = cast("dict[str, Any]", row[2])
            return ImportPosition(int(row[0]), str(row[1]), report, bool(row[3]))

        return await self._tables.run(work)

    async def save(self, tenant: str, import_id: str, position: ImportPosition) -> bool:
        args = (
            tenant,
            import_id,
            position.line,
            position.digest,
            Jsonb(position.report),
            position.finished,
        )

        async def work(cur: Cursor) -> bool:
            await cur.execute(self._tables.q(_SAVE), args)
            return await cur.fetchone() is not None

        return await self._tables.run(work)

    async def close(self) -> None:
        await self._tables.close()
