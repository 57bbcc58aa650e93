"""`ViewStore` in a SQLite file: the embedded default's views, beside the ledger's own file."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.connection import driver_errors_as
from factledger.adapters.sqlite.migrations import migrate
from factledger.adapters.view_buffer import (
    BufferedViewTransaction,
    LoadMany,
    LoadOne,
    LoadPrefix,
)
from factledger.application.json_text import dumps_sorted
from factledger.application.ledger.ports import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration(
        "0001-tables",
        (
            """CREATE TABLE IF NOT EXISTS view_documents (
            projection TEXT NOT NULL, view TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
            PRIMARY KEY (projection, view, key))""",
            """CREATE TABLE IF NOT EXISTS view_tracking (
            projection TEXT PRIMARY KEY, position INTEGER NOT NULL)""",
        ),
    ),
)


def _load_one(conn: sqlite3.Connection, projection: str) -> LoadOne:
    def load(view: str, key: str) -> str | None:
        row = conn.execute(
            "SELECT doc FROM view_documents WHERE projection=? AND view=? AND key=?",
            (projection, view, key),
        ).fetchone()
        return None if row is None else str(row[0])

    return load


def _load_prefix(conn: sqlite3.Connection, projection: str) -> LoadPrefix:
    def load(view: str, prefix: str) -> list[tuple[str, str]]:
        rows = conn.execute(
            "SELECT key, doc FROM view_documents WHERE projection=? AND view=? "
            "AND substr(key, 1, ?) = ? ORDER BY key",
            (projection, view, len(prefix), prefix),
        ).fetchall()
        return [(str(key), str(doc)) for key, doc in rows]

    return load


def _load_many(conn: sqlite3.Connection, projection: str) -> LoadMany:
    def load(view: str, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        # Within SQLite's bound-parameter limit, a few hundred keys a statement.
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ", ".join("?" for _ in chunk)
            rows = conn.execute(
                "SELECT key, doc FROM view_documents WHERE projection=? AND view=? "  # noqa: S608 - placeholders only
                f"AND key IN ({marks})",
                (projection, view, *chunk),
            ).fetchall()
            found.update((str(key), str(doc)) for key, doc in rows)
        return found

    return load


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
            # No sync of the log at each commit: a power cut can take back the last commits,
            # documents and position together, and the projection then replays those events
            # from the ledger (which keeps FULL). A sync per page was a third of a rebuild.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            migrate(self._conn, path, "views", MIGRATIONS)
        self._lock = threading.RLock()
        # The transactions open on this handle, outermost first (more than one: savepoints).
        self._open: list[BufferedViewTransaction] = []

    def _buffered(self) -> BufferedViewTransaction:
        return BufferedViewTransaction(
            _load_one(self._conn, self.name),
            _load_prefix(self._conn, self.name),
            dumps_sorted,
            self._read_position(),
            _load_many(self._conn, self.name),
        )

    def _write(self, txn: BufferedViewTransaction) -> None:
        writes = txn.take_writes()
        if writes.deletes:
            self._conn.executemany(
                "DELETE FROM view_documents WHERE projection=? AND view=? AND key=?",
                [(self.name, view, key) for view, key in writes.deletes],
            )
        if writes.puts:
            self._conn.executemany(
                "INSERT INTO view_documents VALUES (?, ?, ?, ?) "
                "ON CONFLICT (projection, view, key) DO UPDATE SET doc=excluded.doc",
                [(self.name, view, key, text) for view, key, text in writes.puts],
            )

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
            if nested and self._open:
                # The outer transaction's writes go first, as they would have unbuffered.
                self._write(self._open[-1])
            self._conn.execute("SAVEPOINT view_txn" if nested else "BEGIN IMMEDIATE")
            depth = len(self._open)
            try:
                txn = self._buffered()
                self._open.append(txn)
                yield txn
                self._write(txn)
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
            finally:
                del self._open[depth:]
                if self._open:  # what the outer one read may have changed under it
                    self._open[-1].forget_reads()

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
                # Its writes are never taken: they end with it.
                yield self._buffered()
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
