"""One SQLite connection shared by a process's threads, with write transactions run off the
event loop. SQLite serialises writers per file; the lock serialises this process's threads
on the one connection, which sqlite3 does not do by itself."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class SqliteWriter:
    """Runs each unit of work in its own `BEGIN IMMEDIATE` transaction, in a worker thread.

    - `BEGIN IMMEDIATE` takes the file's write lock before the first read, so a read-then-write
      (claim a key, append the next index) cannot interleave with another process's.
    - Any SQLite failure, opening the file included, becomes the store's port error `error()`,
      the driver error kept as its cause.
    """

    def __init__(
        self, path: Path | str, *, error: Callable[[], Exception], busy_timeout_s: float = 30.0
    ) -> None:
        self._error = error
        self.lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout_s
            )
            with self.lock:
                self.conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as exc:
            raise error() from exc

    def run_sync(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` in one transaction, on the calling thread."""
        try:
            return self._transaction(work)
        except sqlite3.Error as exc:
            raise self._error() from exc

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` in one transaction, in a worker thread."""
        return await asyncio.to_thread(self.run_sync, work)

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                result = work(self.conn)
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            return result

    async def checkpoint(self) -> None:
        """Copies the write-ahead log into the file and truncates it, so pages overwritten
        since (deleted rows, with `secure_delete`) survive in neither; a reader still on an
        older snapshot makes it a partial checkpoint, which the next one completes."""
        await asyncio.to_thread(self.checkpoint_sync)

    def checkpoint_sync(self) -> None:
        try:
            with self.lock:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise self._error() from exc

    def close(self) -> None:
        with self.lock:
            self.conn.close()


@contextmanager
def driver_errors_as(error: Callable[[], Exception]) -> Iterator[None]:
    """A SQLite failure inside the block becomes the store's port error, its cause kept."""
    try:
        yield
    except sqlite3.Error as exc:
        raise error() from exc
