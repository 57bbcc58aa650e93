"""`PostgresTables`: a connection pool and the schema one store's tables live in.

The PostgreSQL twin of `SqliteWriter`: every unit of work runs in its own transaction, and a
psycopg failure becomes the store's own port error, the driver error kept as its cause. The
pool replaces connections the server dropped and bounds every wait (`postgres_pool`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from psycopg import AsyncCursor, sql
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import migrate
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_async_pool
from factledger.adapters.sql_names import sql_name
from factledger.application.errors import port_error

T = TypeVar("T")
Cursor = AsyncCursor[TupleRow]


class PostgresTables:
    def __init__(
        self, pool: AsyncConnectionPool, *, schema: str, error: Callable[[], Exception]
    ) -> None:
        self._pool = pool
        self.schema_name = sql_name(schema)
        self._schema = sql.Identifier(self.schema_name)
        self._error = error

    @classmethod
    async def open(
        cls,
        conninfo: str,
        *,
        schema: str,
        error: Callable[[], Exception],
        store: str,
        migrations: Sequence[StoreMigration],
        setup: Callable[[PostgresTables, Cursor], Awaitable[None]] | None = None,
        pool: PoolOptions = DEFAULT_POOL,
    ) -> PostgresTables:
        """Applies what the schema lacks of `store`'s `migrations` (`postgres.migrations`),
        then opens the pool and runs `setup` (rows the store needs, idempotently) in one
        transaction."""
        tables = cls(
            healing_async_pool(conninfo, pool, name=f"factledger.{schema}"),
            schema=schema,
            error=error,
        )
        try:
            await asyncio.to_thread(
                migrate, conninfo, tables.schema_name, store, migrations, pool=pool
            )
            # No waiting for the pool to fill: `setup` waits for one connection, as long as
            # any caller would (`acquire_timeout_s`).
            await tables._pool.open()
            if setup is not None:
                await tables.run(lambda cur: setup(tables, cur))
        except BaseException as exc:
            await tables._pool.close()
            if isinstance(exc, psycopg.Error):
                raise port_error(exc, error()) from exc
            raise
        return tables

    def q(self, text: str) -> sql.Composed:
        """`text` with `{schema}` bound to the store's schema."""
        return sql.SQL(text).format(schema=self._schema)

    async def run(self, work: Callable[[Cursor], Awaitable[T]]) -> T:
        try:
            async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                return await work(cur)
        except psycopg.Error as exc:
            raise port_error(exc, self._error()) from exc

    async def run_single(self, work: Callable[[Cursor], Awaitable[T]]) -> T:
        """Like `run` for work whose writes are one statement (each statement of `work`
        commits on its own): one round trip each, where `run` adds a `BEGIN` and a `COMMIT`."""
        try:
            async with self._pool.connection() as conn:
                await conn.set_autocommit(True)  # a flag: no round trip
                try:
                    async with conn.cursor() as cur:
                        return await work(cur)
                finally:
                    await conn.set_autocommit(False)
        except psycopg.Error as exc:
            raise port_error(exc, self._error()) from exc

    async def rewrite(self, table: str) -> None:
        """Rewrites `table` into new files (`VACUUM (FULL)`), so deleted rows leave no byte
        behind: a plain VACUUM unlinks them but the pages' free space keeps their bytes until
        new rows overwrite them. It locks the table while it copies: for small
        tables. VACUUM cannot run in a transaction block, hence autocommit."""
        statement = sql.SQL("VACUUM (FULL) {}.{}").format(self._schema, sql.Identifier(table))
        try:
            async with self._pool.connection() as conn:
                await conn.set_autocommit(True)
                try:
                    await conn.execute(statement)
                finally:
                    await conn.set_autocommit(False)
        except psycopg.Error as exc:
            raise self._error() from exc

    async def close(self) -> None:
        await self._pool.close()


@contextmanager
def driver_errors_as(error: Callable[[], Exception]) -> Iterator[None]:
    """A psycopg failure inside the block becomes the store's port error (or a storage error:
    disk full, read-only), its cause kept."""
    try:
        yield
    except psycopg.Error as exc:
        raise port_error(exc, error()) from exc
