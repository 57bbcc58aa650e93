"""`GroupCommit`: saves from many threads share one PostgreSQL transaction and one commit.

The `eventsourcing` library's PostgreSQL recorder takes an `EXCLUSIVE` lock on the events
table in every transaction that inserts events (so notification ids are issued in commit
order), which serialises writers: one save is one lock, one `NOTIFY`, one round trip for the
insert and one commit, while every other writer waits for the lock. Here the callers queue
their unit of work; one writer thread takes whatever has queued up (at most `max_units`),
runs it in one transaction and answers each caller after the commit.

- Nobody is answered before the commit: a killed process loses only unanswered units,
  which their callers' clients retry.
- A unit that fails alone (another writer took its versions) gets its own error; the
  others commit. A failure of the transaction itself (the database away, a failed commit)
  fails every unit of the batch with it: none of it is written. It also fails the units
  that queued while that transaction was failing, without a transaction of their own:
  each attempt on a database that is away costs up to the pool's wait, and a unit that
  waited for one failed batch and then ran its own would answer its 503 late (twice the
  wait and more), past the budget a client is promised.
- Units of one aggregate never share a batch: the second waits for the next one, so a
  batch never holds two claims on one version.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

T = TypeVar("T")
DEFAULT_MAX_UNITS = 64


@dataclass(eq=False, slots=True)
class Unit(Generic[T]):
    """One caller's work; `keys` name its aggregates (units that share one never share a
    batch)."""

    keys: frozenset[object]
    work: T
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: BaseException | None = None


Outcome = object | BaseException  # a unit's result, or the error its caller gets
RunBatch = Callable[[Sequence[T]], Sequence[Outcome]]


class GroupCommit(Generic[T]):
    """Runs queued units in batches on one thread of its own (started on first use)."""

    def __init__(
        self, run_batch: RunBatch[T], *, name: str, max_units: int = DEFAULT_MAX_UNITS
    ) -> None:
        self._run_batch = run_batch
        self._name = name
        self._max_units = max_units
        self._queue: deque[Unit[T]] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.batches = 0  # how many transactions ran (for tests and figures)
        self.units = 0

    def submit(self, keys: frozenset[object], work: T) -> object:
        """Queues `work` and waits until its batch committed; returns its result or raises
        its error (in the caller's thread)."""
        unit = Unit(keys, work)
        with self._ready:
            if self._closed:
                raise RuntimeError(f"{self._name}: closed")
            self._queue.append(unit)
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
            self._ready.notify()
        unit.done.wait()
        if unit.error is not None:
            raise unit.error
        return unit.result

    def close(self) -> None:
        """Answers what is queued, then stops the thread."""
        with self._ready:
            self._closed = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _take(self) -> list[Unit[T]] | None:
        with self._ready:
            while not self._queue:
                if self._closed:
                    return None
                self._ready.wait()
            batch: list[Unit[T]] = []
            keys: set[object] = set()
            deferred: list[Unit[T]] = []
            while self._queue and len(batch) < self._max_units:
                unit = self._queue.popleft()
                if not keys.isdisjoint(unit.keys):
                    deferred.append(unit)
                    continue
                keys |= unit.keys
                batch.append(unit)
            self._queue.extendleft(reversed(deferred))
            return batch

    def _take_queued(self) -> list[Unit[T]]:
        with self._ready:
            queued = list(self._queue)
            self._queue.clear()
            return queued

    def _serve(self) -> None:
        while (batch := self._take()) is not None:
            try:
                outcomes = self._run_batch([unit.work for unit in batch])
            except BaseException as exc:
                batch += self._take_queued()
                outcomes = [_copy_of(exc) for _ in batch]
                log.warning(
                    "ledger.group_commit_failed", units=len(batch), error_type=type(exc).__name__
                )
            self.batches += 1
            self.units += len(batch)
            for unit, outcome in zip(batch, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    unit.error = outcome
                else:
                    unit.result = outcome
                unit.done.set()


def _copy_of(exc: BaseException) -> BaseException:
    """Each caller raises an error of its own (one instance raised in several threads would
    share its traceback); the batch's error stays the cause."""
    try:
        copy = type(exc)(*exc.args)
    except Exception:
        return exc
    copy.__cause__ = exc.__cause__ or exc
    return copy
