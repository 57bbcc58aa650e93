"""`DeferredLoad`: a model's load run once on a thread of its own, after the process is ready.

A served process calls `start_deferred_loads` once it is ready, so that readiness never waits
for a model; the first call that needs the model waits for its load (and gets its error).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class DeferredLoad(Generic[T]):
    """A model load run once on a thread of its own: from `start()` (a served process calls
    `start_deferred_loads` once it is ready), or from the first `result()`, whichever comes
    first. The waiters get the load's result or its error."""

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._future: Future[T] = Future()
        self._started = False
        self._lock = threading.Lock()

    @classmethod
    def pending(cls, load: Callable[[], T]) -> DeferredLoad[T]:
        """A load that starts with `start_deferred_loads` or its first waiter."""
        deferred = cls(load)
        with _DEFERRED_LOCK:
            _DEFERRED.append(deferred)
        return deferred

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        with _DEFERRED_LOCK:
            if self in _DEFERRED:
                _DEFERRED.remove(self)
        # Not a daemon: the interpreter waits for a load still running when the process ends,
        # since onnxruntime torn down mid-load aborts the process ("terminate called without
        # an active exception") instead of letting it exit.
        threading.Thread(target=self._run, name="factledger-model-load", daemon=False).start()

    def _run(self) -> None:
        try:
            self._future.set_result(self._load())
        except BaseException as exc:  # every failure, or a waiter would wait for ever
            self._future.set_exception(exc)

    def result(self) -> T:
        self.start()
        return self._future.result()

    def done(self) -> bool:
        return self._future.done()

    @classmethod
    def finished(cls, loaded: T) -> DeferredLoad[T]:
        deferred = cls(lambda: loaded)
        deferred._started = True
        deferred._future.set_result(loaded)
        return deferred


_DEFERRED: list[DeferredLoad[Any]] = []
_DEFERRED_LOCK = threading.Lock()


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


def start_deferred_loads() -> None:
    """Starts every model load deferred so far: what a process calls once it is ready to
    serve, so that readiness never waits for a model and the first request waits less."""
    with _DEFERRED_LOCK:
        pending = list(_DEFERRED)
    for deferred in pending:
        deferred.start()
