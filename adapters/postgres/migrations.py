"""The PostgreSQL side of the stores' versioned migrations (`adapters.migrations`): yoyo's
psycopg 3 backend on a connection of its own, in the store's schema, under the schema's
advisory lock (held by the session: a killed process releases it with its connection)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from yoyo.backends.core.postgresql import PostgresqlPsycopgBackend
from yoyo.connections import DatabaseURI

from factledger.adapters.migrations import (
    MIGRATIONS_TABLE,
    StoreMigration,
    applied_ids,
    apply_pending,
)
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions

# The key `schemas` takes too: DDL in one schema runs one process at a time.
_LOCK = "SELECT pg_advisory_lock(hashtextextended('factledger.schema:' || %s, 0))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtextextended('factledger.schema:' || %s, 0))"
_SCHEMA_EXISTS = "SELECT 1 FROM pg_namespace WHERE nspname = %s"
# A step that SQL alone cannot make (a change only some old layouts need): a function of the
# migration's connection and the schema's name.
SchemaStep = Callable[[psycopg.Connection[Any], str], None]


def in_schema(text: str, schema: str) -> sql.Composed:
    """`text` with `{schema}` bound to `schema`, quoted."""
    return sql.SQL(text).format(schema=sql.Identifier(schema))


def _bound(migrations: Sequence[StoreMigration], schema: str) -> list[StoreMigration]:
    """The migrations with `{schema}` bound in their SQL and given to their functions."""

    def bind(step: object) -> str | Callable[[Any], None]:
        if isinstance(step, str):
            return in_schema(step, schema).as_string()
        function: SchemaStep = step  # type: ignore[assignment]
        return lambda conn: function(conn, schema)

    return [StoreMigration(m.id, tuple(bind(step) for step in m.steps)) for m in migrations]


class _SchemaBackend(PostgresqlPsycopgBackend):  # type: ignore[misc]
    """yoyo's backend on our connection string (any libpq form, not only a URL) with its
    tables in the store's schema, and the schema's advisory lock in place of yoyo's lock row."""

    _is_locked: bool = False
    schema: str

    def connect(self, dburi: DatabaseURI) -> psycopg.Connection[Any]:
        args = dburi.args
        self.schema = args["schema"]
        pool: PoolOptions = args["pool"]
        return psycopg.connect(args["conninfo"], **pool.connection_kwargs(autocommit=True))

    def init_connection(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    @contextmanager
    def lock(self, timeout: int = 10) -> Iterator[None]:
        if self._is_locked:
            yield
            return
        self.connection.execute(_LOCK, (self.schema,))
        self._is_locked = True
        try:
            yield
        finally:
            self._is_locked = False
            self.connection.execute(_UNLOCK, (self.schema,))


@contextmanager
def _backend(conninfo: str, schema: str, pool: PoolOptions) -> Iterator[_SchemaBackend]:
    args = {"conninfo": conninfo, "schema": schema, "pool": pool}
    uri = DatabaseURI("postgresql+psycopg", None, None, None, None, None, args)
    backend = _SchemaBackend(uri, MIGRATIONS_TABLE)
    backend.has_transactional_ddl = True  # PostgreSQL's DDL is transactional: no probe table
    with backend:
        if backend.connection.execute(_SCHEMA_EXISTS, (schema,)).fetchone() is None:
            with backend.lock():
                create = sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
                backend.connection.execute(create)
        yield backend


def migrate(
    conninfo: str,
    schema: str,
    store: str,
    migrations: Sequence[StoreMigration],
    *,
    pool: PoolOptions = DEFAULT_POOL,
) -> list[str]:
    """Creates `schema` if missing and applies what it lacks of `store`'s `migrations` (their
    SQL written with `{schema}`, their functions `SchemaStep`s); the ids applied (none when
    every one is recorded already). Blocking: run it in a thread."""
    with _backend(conninfo, schema, pool) as backend:
        return apply_pending(backend, store, _bound(migrations, schema), backend.lock)


def recorded(
    conninfo: str, schema: str, store: str, *, pool: PoolOptions = DEFAULT_POOL
) -> list[str]:
    """The ids of `store`'s migrations recorded in `schema`, in the order applied."""
    with _backend(conninfo, schema, pool) as backend:
        return applied_ids(backend, store)
