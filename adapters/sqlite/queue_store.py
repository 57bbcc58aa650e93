"""`QueueStore` in a SQLite file (or in memory, for the in-memory default): the review
queue's indexed tables beside the views."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.review_queue_combined import combined_statements
from factledger.adapters.review_queue_sql import (
    Cursorish,
    QueueTables,
    SqlQueueStore,
    SqlQueueWrites,
    counter_statements,
    covering_statements,
    subject_search_statements,
    table_statements,
)
from factledger.adapters.sqlite.connection import driver_errors_as
from factledger.adapters.sqlite.migrations import migrate
from factledger.application.review_queue.ports import QueueStoreUnavailableError, QueueWrites

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration("0001-tables", table_statements("")),
    StoreMigration("0002-groups-covering-index", covering_statements("")),
    StoreMigration(
        "0003-subjects-search",
        subject_search_statements(
            "", ref_of_search="substr(i.search, instr(i.search, char(10)) + 1)"
        ),
    ),
    StoreMigration("0004-counters", counter_statements("")),
    StoreMigration("0005-combined-counters", combined_statements("")),
)


def _unavailable() -> QueueStoreUnavailableError:
    return QueueStoreUnavailableError("sqlite review queue failed")


class _Runner:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, query: str, args: Sequence[object] = ()) -> Cursorish:
        return self._conn.execute(query, tuple(args))

    def run_many(self, query: str, rows: Sequence[Sequence[object]]) -> None:
        self._conn.executemany(query, [tuple(r) for r in rows])


class SqliteQueueStore(SqlQueueStore):
    """The review queue's tables in `path` (`":memory:"`: a private database of this process)."""

    def __init__(self, path: Path | str, name: str = "review_queue") -> None:
        super().__init__()
        self.name, self._path = name, path
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        with driver_errors_as(_unavailable, path=path):
            self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=10000")
            # As the views: a power cut may take back the last commits, rows and position
            # together, and the projection replays those events from the ledger.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            migrate(self._conn, path, "review_queue", MIGRATIONS)
        self._lock = threading.RLock()
        self._db = _Runner(self._conn)
        self._tables = QueueTables("")

    @contextmanager
    def _transaction(self) -> Iterator[QueueWrites]:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                txn = SqlQueueWrites(
                    self._db, self._tables, self._tables.read_position(self._db, self.name)
                )
                yield txn
                txn.finish()
                if txn.new_position != txn.start_position:
                    self._tables.store_position(self._db, self.name, txn.new_position)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def transaction(self) -> AbstractContextManager[QueueWrites]:
        return self._transaction()

    def _reading(self) -> AbstractContextManager[_Runner]:
        return self._read()

    @contextmanager
    def _read(self) -> Iterator[_Runner]:
        # One deferred transaction: the page and its count read the same snapshot.
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            self._conn.execute("BEGIN")
            try:
                yield self._db
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def drop(self) -> None:
        with self._lock, driver_errors_as(_unavailable, path=self._path):
            self._conn.execute("BEGIN IMMEDIATE")
            self._tables.drop(self._db, self.name)
            self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()
