"""`DeferredLoad`: a model's load run on a thread of its own, after the process is ready.

A served process calls `start_deferred_loads` once it is ready, so that readiness never waits
for a model; the first call that needs the model waits for its load (and gets its error, as
`ModelUnavailableError`: answered 503, a degraded recall, a sync item that waits). A failed
load is every waiter's error until `RETRY_AFTER_S` has passed; the next waiter then
starts it again, so a passing fault (a file system briefly unreadable, memory short, a file
replaced by an operator) costs degraded answers for a while, not the model for the process's
life. `failing_loads` counts, by model, the loads whose last attempt failed (`/metrics`).
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

import structlog

from factledger.application.errors import ModelUnavailableError

T = TypeVar("T")

log = structlog.get_logger(__name__)

# Long enough that a file that stays damaged is read again about twice a minute at most.
RETRY_AFTER_S = 30.0


class DeferredLoad(Generic[T]):
    """A model load run on a thread of its own: from `start()` (a served process calls
    `start_deferred_loads` once it is ready), or from the first `result()`, whichever comes
    first. The waiters get the load's result or its error; a failed load runs again for the
    first waiter after `retry_after_s` (`RETRY_AFTER_S` unless given; `clock`: seconds,
    monotonic). `name` says which model it is in logs and metrics."""

    def __init__(
        self,
        load: Callable[[], T],
        *,
        name: str = "model",
        retry_after_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._load = load
        self._retry_after_s = RETRY_AFTER_S if retry_after_s is None else retry_after_s
        self._clock = clock
        self._future: Future[T] = Future()
        self._started = False
        self._failed_at: float | None = None  # when the last attempt failed, if it did
        self._retrying = False
        self._lock = threading.Lock()
        with _DEFERRED_LOCK:
            _EVERY_LOAD.add(self)

    @classmethod
    def pending(
        cls,
        load: Callable[[], T],
        *,
        name: str = "model",
        retry_after_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> DeferredLoad[T]:
        """A load that starts with `start_deferred_loads` or its first waiter."""
        deferred = cls(load, name=name, retry_after_s=retry_after_s, clock=clock)
        with _DEFERRED_LOCK:
            _DEFERRED.append(deferred)
        return deferred

    @property
    def failing(self) -> bool:
        """Whether its last attempt failed (until a retry succeeds)."""
        with self._lock:
            return self._failed_at is not None

    def start(self) -> None:
        with self._lock:
            if self._started and not self._retry_due():
                return
            if self._started:  # a retry: the model counts as failing until it succeeds
                self._future, self._retrying = Future(), True
            self._started = True
            future = self._future
        with _DEFERRED_LOCK:
            if self in _DEFERRED:
                _DEFERRED.remove(self)
        # Not a daemon: the interpreter waits for a load still running when the process ends,
        # since onnxruntime torn down mid-load aborts the process ("terminate called without
        # an active exception") instead of letting it exit.
        threading.Thread(
            target=self._run, args=(future,), name="factledger-model-load", daemon=False
        ).start()

    def _retry_due(self) -> bool:
        return (
            self._failed_at is not None
            and not self._retrying
            and self._clock() - self._failed_at >= self._retry_after_s
        )

    def _run(self, future: Future[T]) -> None:
        try:
            loaded = self._load()
        except BaseException as exc:  # every failure, or a waiter would wait for ever
            log.warning(
                "model.load_failed",
                model=self.name,
                error=type(exc).__name__,
                retry_after_s=self._retry_after_s,
            )
            with self._lock:
                self._failed_at, self._retrying = self._clock(), False
            future.set_exception(exc)
        else:
            with self._lock:
                self._failed_at, self._retrying = None, False
            future.set_result(loaded)

    def result(self) -> T:
        """The loaded model; `ModelUnavailableError` (the load's error as its cause) while its
        last load failed."""
        self.start()
        with self._lock:
            future = self._future
        try:
            return future.result()
        except Exception as exc:
            raise ModelUnavailableError(
                f"the {self.name} model is not loaded ({type(exc).__name__}); tried again "
                f"{self._retry_after_s:g} s after its load failed"
            ) from exc

    def done(self) -> bool:
        with self._lock:
            return self._future.done()

    def settled(self) -> None:
        """Waits until the current attempt has ended, loaded or failed (never raises)."""
        with self._lock:
            future = self._future
        concurrent.futures.wait([future])

    @classmethod
    def finished(cls, loaded: T) -> DeferredLoad[T]:
        deferred = cls(lambda: loaded)
        deferred._started = True
        deferred._future.set_result(loaded)
        return deferred


_DEFERRED: list[DeferredLoad[Any]] = []
_EVERY_LOAD: weakref.WeakSet[DeferredLoad[Any]] = weakref.WeakSet()
_DEFERRED_LOCK = threading.Lock()


def failing_loads() -> Counter[str]:
    """How many of the process's loads, by model name, failed on their last attempt."""
    with _DEFERRED_LOCK:
        loads = list(_EVERY_LOAD)
    return Counter(load.name for load in loads if load.failing)


def finish_deferred_loads() -> None:
    """Starts every model load deferred so far and waits for them all (raising the first
    one's error): for a process that would rather have its models before its first call, or
    a measurement that must not count a load in what it times."""
    with _DEFERRED_LOCK:
        pending = list(_DEFERRED)
    for deferred in pending:
        deferred.start()
    for deferred in pending:
        deferred.result()


def start_deferred_loads() -> list[DeferredLoad[Any]]:
    """Starts every model load deferred so far: what a process calls once it is ready to
    serve, so that readiness never waits for a model and the first request waits less.
    Returns the loads it started."""
    with _DEFERRED_LOCK:
        pending = list(_DEFERRED)
    for deferred in pending:
        deferred.start()
    return pending
