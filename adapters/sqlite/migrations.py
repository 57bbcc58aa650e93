"""The SQLite side of the stores' versioned migrations (`adapters.migrations`): yoyo's SQLite
backend on the store's own connection (so `:memory:` databases migrate too), under a file
lock beside the database (released by the system when a process dies; SQLite's own locks
cannot serve, since the migration's transactions take them on the same connection)."""

from __future__ import annotations

import fcntl
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from yoyo.backends.core.sqlite3 import SQLiteBackend
from yoyo.connections import DatabaseURI

from factledger.adapters.migrations import (
    MIGRATIONS_TABLE,
    StoreMigration,
    applied_ids,
    apply_pending,
)

IN_MEMORY = ":memory:"
LOCK_SUFFIX = ".migrations.lock"


class _ConnectionBackend(SQLiteBackend):  # type: ignore[misc]
    """yoyo's SQLite backend on a connection it is handed (and leaves open), locked by a
    file beside the database in place of yoyo's lock row."""

    _is_locked: bool = False

    def __init__(
        self, dburi: DatabaseURI, migration_table: str, connection: sqlite3.Connection
    ) -> None:
        self.uri = dburi
        self.DatabaseError = self.driver.DatabaseError
        self._connection = connection
        self.migration_table = migration_table
        self.has_transactional_ddl = True  # SQLite's DDL is transactional: no probe table

    def copy(self) -> _ConnectionBackend:
        return _ConnectionBackend(self.uri, self.migration_table, self._connection)

    def __exit__(self, *exc: object) -> None:
        # yoyo's closes the connection: this one is the store's.
        self.driver.converters = self._saved_converters
        self.driver.adapters = self._saved_adapters

    @contextmanager
    def lock(self, timeout: int = 10) -> Iterator[None]:
        if self._is_locked:
            yield
            return
        with _file_lock(self.uri.database):
            self._is_locked = True
            try:
                yield
            finally:
                self._is_locked = False


@contextmanager
def _file_lock(database: str) -> Iterator[None]:
    if database == IN_MEMORY:  # private to its connection: nobody else can migrate it
        yield
        return
    with Path(database + LOCK_SUFFIX).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _backend(conn: sqlite3.Connection, path: Path | str) -> Iterator[_ConnectionBackend]:
    database = str(path)
    uri = DatabaseURI("sqlite", None, None, None, None, database, {})
    with _ConnectionBackend(uri, MIGRATIONS_TABLE, conn) as backend:
        yield backend


def migrate(
    conn: sqlite3.Connection,
    path: Path | str,
    store: str,
    migrations: Sequence[StoreMigration],
) -> list[str]:
    """Applies what the database at `path` (open as `conn`, in autocommit mode, used by no
    other thread meanwhile) lacks of `store`'s `migrations`; the ids applied."""
    with _backend(conn, path) as backend:
        return apply_pending(backend, store, migrations, backend.lock)


def recorded(conn: sqlite3.Connection, path: Path | str, store: str) -> list[str]:
    """The ids of `store`'s migrations recorded in the database, in the order applied."""
    with _backend(conn, path) as backend:
        ids: list[str] = applied_ids(backend, store)
        return ids
