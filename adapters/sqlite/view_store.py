"""`ViewStore` in a SQLite file: the embedded default's views, beside the ledger's own file."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import cast

from factledger.adapters.sqlite.connection import driver_errors_as
from factledger.application.ledger.view_store import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)
from factledger.domain.values import JsonObject

TABLES = """
CREATE TABLE IF NOT EXISTS view_documents (
    projection TEXT NOT NULL, view TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
    PRIMARY KEY (projection, view, key)
);
CREATE TABLE IF NOT EXISTS view_tracking (
    projection TEXT PRIMARY KEY, position INTEGER NOT NULL
);
"""

# One encoder for every document: `json.dumps` with options builds a new one per call.
_encode = json.JSONEncoder(sort_keys=True).encode


class _SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection, projection: str, position: int) -> None:
        self._conn, self._projection = conn, projection
        self.start_position = self.new_position = position

    def get(self, view: str, key: str) -> JsonObject | None:
        row = self._conn.execute(
            "SELECT doc FROM view_documents WHERE projection=? AND view=? AND key=?",
            (self._projection, view, key),
        ).fetchone()
        return None if row is None else cast("JsonObject", json.loads(row[0]))

    def put(self, view: str, key: str, doc: JsonObject) -> None:
        self._conn.execute(
            "INSERT INTO view_documents VALUES (?, ?, ?, ?) "
            "ON CONFLICT (projection, view, key) DO UPDATE SET doc=excluded.doc",
            (self._projection, view, key, _encode(doc)),
        )

    def delete(self, view: str, key: str) -> None:
        self._conn.execute(
            "DELETE FROM view_documents WHERE projection=? AND view=? AND key=?",
            (self._projection, view, key),
        )

    def scan(self, view: str, prefix: str) -> list[tuple[str, JsonObject]]:
        rows = self._conn.execute(
            "SELECT key, doc FROM view_documents WHERE projection=? AND view=? "
            "AND substr(key, 1, ?) = ? ORDER BY key",
            (self._projection, view, len(prefix), prefix),
        ).fetchall()
        return [(key, cast("JsonObject", json.loads(doc))) for key, doc in rows]

    def position(self) -> int:
        return self.new_position

    def advance(self, position: int) -> None:
        self.new_position = position


def _unavailable() -> ViewStoreUnavailableError:
    return ViewStoreUnavailableError("sqlite view store failed")


class SqliteViewStore:
    """Views of one projection in a SQLite file; `BEGIN IMMEDIATE` serialises writers."""

    def __init__(self, path: Path, name: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self.name = name
        # Autocommit mode: transactions are opened explicitly below.
        with driver_errors_as(_unavailable, path=self._path):
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=10000")
            self._conn.executescript(TABLES)
        self._lock = threading.RLock()

    def _read_position(self) -> int:
        row = self._conn.execute(
            "SELECT position FROM view_tracking WHERE projection=?", (self.name,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    @contextmanager
    def _transaction(self) -> Iterator[ViewTransaction]:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            # A transaction opened inside another on this handle is a savepoint of it; the
            # outer one then finds its position moved and refuses to commit.
            nested = self._conn.in_transaction
            self._conn.execute("SAVEPOINT view_txn" if nested else "BEGIN IMMEDIATE")
            try:
                txn = _SqliteTransaction(self._conn, self.name, self._read_position())
                yield txn
                if txn.new_position != txn.start_position:
                    self._store_position(txn.start_position, txn.new_position)
                self._conn.execute("RELEASE view_txn" if nested else "COMMIT")
            except BaseException:
                # A full disk or an I/O error rolls the whole transaction back by itself; a
                # second rollback would fail and hide that error behind its own.
                if not self._conn.in_transaction:
                    raise
                if nested:
                    self._conn.execute("ROLLBACK TO view_txn")
                    self._conn.execute("RELEASE view_txn")
                else:
                    self._conn.execute("ROLLBACK")
                raise

    def _store_position(self, old: int, new: int) -> None:
        if old == 0:
            self._conn.execute("INSERT OR IGNORE INTO view_tracking VALUES (?, 0)", (self.name,))
        cursor = self._conn.execute(
            "UPDATE view_tracking SET position=? WHERE projection=? AND position=?",
            (new, self.name, old),
        )
        if cursor.rowcount != 1:
            raise PositionMovedError(self.name)

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        return self._transaction()

    @contextmanager
    def _read(self) -> Iterator[ViewTransaction]:
        # A deferred transaction: one consistent snapshot (WAL), no write lock taken.
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            self._conn.execute("BEGIN")
            try:
                yield _SqliteTransaction(self._conn, self.name, self._read_position())
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def read(self) -> AbstractContextManager[ViewTransaction]:
        return self._read()

    def position(self) -> int:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            return self._read_position()

    def drop(self) -> None:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.execute("DELETE FROM view_documents WHERE projection=?", (self.name,))
            self._conn.execute("DELETE FROM view_tracking WHERE projection=?", (self.name,))
            self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()
