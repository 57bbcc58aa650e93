"""One SQLite connection shared by a process's threads, with write transactions run off the
event loop. SQLite serialises writers per file; the lock serialises this process's threads
on the one connection, which sqlite3 does not do by itself."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.sqlite.group_commit import GroupCommitter
from factledger.adapters.sqlite.migrations import migrate
from factledger.application.errors import StorageFullError, StorageReadOnlyError, port_error

T = TypeVar("T")


class SqliteWriter:
    """Runs units of work in `BEGIN IMMEDIATE` transactions: async callers' units in batches
    (`group_commit`), synchronous callers' one at a time on their own thread.

    - `BEGIN IMMEDIATE` takes the file's write lock before the first read, so a read-then-write
      (claim a key, append the next index) cannot interleave with another process's.
    - Any SQLite failure, opening the file included, becomes the store's port error `error()`,
      the driver error kept as its cause.
    """

    def __init__(
        self, path: Path | str, *, error: Callable[[], Exception], busy_timeout_s: float = 30.0
    ) -> None:
        self._error = error
        self._path = path
        self.lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(
                str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout_s
            )
            with self.lock:
                self.conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as exc:
            raise sqlite_port_error(exc, error(), path) from exc
        self._committer = GroupCommitter(self.conn, self.lock, self._as_port_error)

    def migrate(self, store: str, migrations: Sequence[StoreMigration]) -> list[str]:
        """Applies what the file lacks of `store`'s versioned `migrations`; the ids applied."""
        try:
            with self.lock:
                return migrate(self.conn, self._path, store, migrations)
        except sqlite3.Error as exc:
            raise sqlite_port_error(exc, self._error(), self._path) from exc

    def read(self, statement: str, args: tuple[object, ...]) -> tuple[object, ...] | None:
        """The first row of one `SELECT`, in autocommit: a read of the latest commit that
        takes no write lock, on the calling thread."""
        try:
            with self.lock:
                row: tuple[object, ...] | None = self.conn.execute(statement, args).fetchone()
                return row
        except sqlite3.Error as exc:
            raise sqlite_port_error(exc, self._error(), self._path) from exc

    def _as_port_error(self, exc: sqlite3.Error) -> Exception:
        error = sqlite_port_error(exc, self._error(), self._path)
        error.__cause__ = exc
        return error

    def run_sync(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` in one transaction, on the calling thread."""
        try:
            return self._transaction(work)
        except sqlite3.Error as exc:
            raise sqlite_port_error(exc, self._error(), self._path) from exc

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` in a transaction shared with whatever else is queued (group commit), in
        the connection's writer thread; answered once that transaction has committed."""
        result: T = await self._committer.run(work)
        return result

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
        self._committer.close()
        with self.lock:
            self.conn.close()


@contextmanager
def driver_errors_as(
    error: Callable[[], Exception], *, path: Path | str | None = None
) -> Iterator[None]:
    """A SQLite failure inside the block becomes the store's port error (or a storage error:
    disk full, read-only), its cause kept."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sqlite_port_error(exc, error(), path) from exc


# SQLite reports a full disk as SQLITE_FULL only when a write to an open file fails; creating
# a journal or WAL file on a full or read-only file system fails as "unable to open" or an I/O
# error instead, so for those the file system of the store's file is asked.
_SQLITE_IOERR, _SQLITE_CANTOPEN = 10, 14
# Below this many free bytes the file system counts as full: SQLite needs pages, not bytes.
FULL_BELOW_BYTES = 64 * 1024


def sqlite_port_error(exc: sqlite3.Error, error: Exception, path: Path | str | None) -> Exception:
    """`error`, or the storage error that explains `exc` (`application.errors.port_error`)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if path is None or str(path) == ":memory:" or code not in (_SQLITE_IOERR, _SQLITE_CANTOPEN):
        return port_error(exc, error)
    try:
        stats = os.statvfs(Path(path).parent)
    except OSError:
        return port_error(exc, error)
    if stats.f_flag & os.ST_RDONLY:
        return StorageReadOnlyError(f"{error}: {StorageReadOnlyError.__name__}")
    if stats.f_bavail * stats.f_frsize < FULL_BELOW_BYTES:
        return StorageFullError(f"{error}: {StorageFullError.__name__}")
    return port_error(exc, error)
