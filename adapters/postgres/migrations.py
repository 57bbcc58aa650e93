"""The PostgreSQL side of the stores' versioned migrations (`adapters.migrations`): yoyo's
psycopg 3 backend on a connection of its own, in the store's schema, under the schema's
advisory lock (held by the session: a killed process releases it with its connection).

A process that opens several stores can start their migrations ahead (`migrate_ahead`): one
thread and one connection per schema, the schemas side by side, each checking yoyo's tables
once for all its stores. A store's own `migrate` then takes the result of its store's
migration ahead instead of connecting and checking again; if that migration failed, the
store migrates as before and raises its own error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class StoreTables:
    """One store's migrations in a schema, as the store itself would apply them."""

    schema: str
    store: str
    migrations: Sequence[StoreMigration]


_Key = tuple[str, str, str, str]  # conninfo, schema, store, its last migration
# Migrations started ahead and not yet taken by their store, by store.
_ahead: dict[_Key, Future[list[str]]] = {}
_ahead_lock = threading.Lock()


class MigrationsAhead:
    """The migrations `migrate_ahead` started; `discard` forgets those no store took."""

    def __init__(self, keys: list[_Key], threads: list[threading.Thread]) -> None:
        self._keys, self._threads = keys, threads

    def discard(self) -> None:
        """Forgets the results no store took, so that no later `migrate` of this process
        trusts a result older than its call (a store opened again checks again)."""
        with _ahead_lock:
            for key in self._keys:
                _ahead.pop(key, None)

    def join(self, timeout_s: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout_s)


def migrate_ahead(
    conninfo: str, stores: Sequence[StoreTables], *, pool: PoolOptions = DEFAULT_POOL
) -> MigrationsAhead:
    """Starts `stores`' migrations on threads, one per schema, side by side; returns at once.

    A new database's stores spent most of a start's wait on the database, one after another
    (connect, yoyo's tables, the DDL and its commit, each); schemas are independent (each has
    its own advisory lock), and the stores of one schema share a connection and one check of
    yoyo's tables."""
    by_schema: dict[str, list[StoreTables]] = {}
    for tables in stores:
        by_schema.setdefault(tables.schema, []).append(tables)
    keys: list[_Key] = []
    threads: list[threading.Thread] = []
    for schema, group in by_schema.items():
        futures: list[tuple[StoreTables, Future[list[str]]]] = []
        with _ahead_lock:
            for tables in group:
                key = _key(conninfo, schema, tables.store, tables.migrations)
                future: Future[list[str]] = Future()
                _ahead[key] = future
                keys.append(key)
                futures.append((tables, future))
        thread = threading.Thread(
            target=_migrate_schema,
            args=(conninfo, schema, futures, pool),
            name=f"factledger-migrate-{schema}",
            daemon=True,
        )
        thread.start()
        threads.append(thread)
    return MigrationsAhead(keys, threads)


def _migrate_schema(
    conninfo: str,
    schema: str,
    futures: list[tuple[StoreTables, Future[list[str]]]],
    pool: PoolOptions,
) -> None:
    pending = list(futures)
    try:
        with _backend(conninfo, schema, pool) as backend:
            while pending:
                tables, future = pending[0]
                migrations = _bound(tables.migrations, schema)
                future.set_result(apply_pending(backend, tables.store, migrations, backend.lock))
                pending.pop(0)
    except BaseException as exc:  # every store left migrates itself and reports its own error
        for _, future in pending:
            future.set_exception(exc)
        if not isinstance(exc, Exception):
            raise


def _key(conninfo: str, schema: str, store: str, migrations: Sequence[StoreMigration]) -> _Key:
    return (conninfo, schema, store, migrations[-1].id if migrations else "")


def _taken(
    conninfo: str, schema: str, store: str, migrations: Sequence[StoreMigration]
) -> list[str] | None:
    """The ids the migration ahead of this store applied (waiting for it), or None when none
    was started (for these migrations) or it failed."""
    with _ahead_lock:
        future = _ahead.pop(_key(conninfo, schema, store, migrations), None)
    if future is None or future.exception() is not None:
        return None
    return future.result()


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
    every one is recorded already). Blocking: run it in a thread. A migration of this store
    started ahead (`migrate_ahead`) is waited for and its result taken instead."""
    applied = _taken(conninfo, schema, store, migrations)
    if applied is not None:
        return applied
    with _backend(conninfo, schema, pool) as backend:
        return apply_pending(backend, store, _bound(migrations, schema), backend.lock)


def recorded(
    conninfo: str, schema: str, store: str, *, pool: PoolOptions = DEFAULT_POOL
) -> list[str]:
    """The ids of `store`'s migrations recorded in `schema`, in the order applied."""
    with _backend(conninfo, schema, pool) as backend:
        return applied_ids(backend, store)
