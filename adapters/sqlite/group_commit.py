"""Group commit for a `SqliteWriter`: async callers' units of work are queued, and one
writer thread runs whatever has queued up in a single transaction, each unit inside its own
savepoint, so many commits (and their fsyncs) become one.

- A unit sees the writes of the units before it in its batch, as it would have seen them
  had they committed one by one; `BEGIN IMMEDIATE` still shuts out other processes.
- A unit that raises is rolled back to its savepoint and gets its own error; the others
  still commit.
- A unit is answered only after its batch has committed. When the transaction itself fails
  (BEGIN, COMMIT, or an error that makes SQLite abandon it), every unit of the batch gets
  that error and nothing of it is written: a fault costs a retry, never a half-done batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_BATCH = 64  # bounds how long one transaction holds the file's write lock


@dataclass(slots=True)
class Unit:
    """One caller's work and where to answer it."""

    work: Callable[[sqlite3.Connection], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    outcome: tuple[bool, Any] = (False, None)  # (succeeded, result or exception)


class GroupCommitter:
    """The writer thread of one connection; started on first use, stopped by `close`."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.Lock,
        port_error: Callable[[sqlite3.Error], Exception],
        *,
        name: str = "factledger-sqlite-writer",
    ) -> None:
        self._conn, self._lock, self._port_error = conn, lock, port_error
        self._queue: queue.SimpleQueue[Unit | None] = queue.SimpleQueue()
        self._name = name
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.batches = 0  # transactions committed or attempted, for tests and benchmarks

    async def run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        loop = asyncio.get_running_loop()
        unit = Unit(work, loop, loop.create_future())
        self._ensure_started()
        self._queue.put(unit)
        return await unit.future

    def close(self) -> None:
        """Finishes the queued units, then stops the thread."""
        with self._start_lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _ensure_started(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    unit = self._queue.get_nowait()
                except queue.Empty:
                    break
                if unit is None:
                    stopping = True
                    break
                batch.append(unit)
            try:
                self._commit(batch)
            finally:
                _answer(batch)

    def _commit(self, batch: list[Unit]) -> None:
        self.batches += 1
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                for n, unit in enumerate(batch):
                    self._run_one(n, unit)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._abandon(batch, self._port_error(exc))
            except BaseException as exc:
                self._abandon(batch, exc)
                raise

    def _abandon(self, batch: list[Unit], error: BaseException) -> None:
        with contextlib.suppress(sqlite3.Error):
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        for unit in batch:
            unit.outcome = (False, error)

    def _run_one(self, n: int, unit: Unit) -> None:
        savepoint = f"unit_{n}"
        self._conn.execute(f"SAVEPOINT {savepoint}")
        try:
            unit.outcome = (True, unit.work(self._conn))
        except sqlite3.Error as exc:
            if not self._conn.in_transaction:
                # SQLite abandoned the whole transaction (a full disk, an I/O error): the
                # units before this one are gone too, so the batch fails as one.
                raise
            self._conn.execute(f"ROLLBACK TO {savepoint}")
            unit.outcome = (False, self._port_error(exc))
        except Exception as exc:
            self._conn.execute(f"ROLLBACK TO {savepoint}")
            unit.outcome = (False, exc)
        self._conn.execute(f"RELEASE {savepoint}")


def _answer(batch: list[Unit]) -> None:
    """Resolves the batch's futures with one wake-up per event loop."""
    loops: dict[asyncio.AbstractEventLoop, list[Unit]] = {}
    for unit in batch:
        loops.setdefault(unit.loop, []).append(unit)
    for loop, units in loops.items():
        # A closed loop has nobody waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_resolve, units)


def _resolve(units: list[Unit]) -> None:
    for unit in units:
        if unit.future.done():
            continue  # the caller was cancelled; its work has run all the same
        succeeded, value = unit.outcome
        if succeeded:
            unit.future.set_result(value)
        else:
            unit.future.set_exception(value)
