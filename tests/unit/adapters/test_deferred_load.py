"""A deferred model load: a failure is every waiter's error for a pause, then the next waiter
loads again, so a passing fault does not cost the model for the process's life. The pause is
read from a clock the test moves; nothing here waits on time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import structlog
from support.ticks import Ticks

from factledger.adapters.deferred_load import DeferredLoad, failing_loads
from factledger.application.errors import ModelUnavailableError


class FlakyDiskError(OSError):
    pass


@contextmanager
def unavailable_because_of(cause: type[Exception]) -> Iterator[None]:
    """A waiter's error: the model unavailable (a store-like outage), the load's error its
    cause."""
    with pytest.raises(ModelUnavailableError) as raised:
        yield
    assert isinstance(raised.value.__cause__, cause)
    assert "secret-path" not in str(raised.value)  # what the load said stays its own


class Load:
    """Fails with `FlakyDiskError` the first `failures` times, then loads "model"."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.runs = 0

    def __call__(self) -> str:
        self.runs += 1
        if self.runs <= self.failures:
            raise FlakyDiskError("/models/secret-path.onnx: input/output error")
        return "model"


def test_a_failed_load_is_every_waiters_error_until_the_pause_has_passed() -> None:
    clock, load = Ticks(1_000.0), Load(failures=1)
    deferred = DeferredLoad(load, retry_after_s=30.0, clock=clock)
    for moved in (0.0, 10.0, 29.9):
        clock.now = 1_000.0 + moved
        with unavailable_because_of(FlakyDiskError):
            deferred.result()
    assert load.runs == 1
    assert deferred.done()


def test_after_the_pause_the_next_waiter_loads_again_and_every_later_one_shares_it() -> None:
    clock, load = Ticks(1_000.0), Load(failures=1)
    deferred = DeferredLoad(load, retry_after_s=30.0, clock=clock)
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    clock.now += 30.0
    assert deferred.result() == "model"
    clock.now += 3_600.0
    assert deferred.result() == "model"
    assert load.runs == 2


def test_a_load_that_fails_again_waits_another_pause() -> None:
    clock, load = Ticks(1_000.0), Load(failures=2)
    deferred = DeferredLoad(load, retry_after_s=30.0, clock=clock)
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    clock.now += 31.0
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    clock.now += 29.0  # 29 s after the second failure
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    assert load.runs == 2
    clock.now += 1.0
    assert deferred.result() == "model"


def test_a_started_load_that_failed_is_started_again_by_start_after_the_pause() -> None:
    clock, load = Ticks(1_000.0), Load(failures=1)
    deferred = DeferredLoad(load, retry_after_s=30.0, clock=clock)
    deferred.start()
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    clock.now += 30.0
    deferred.start()
    assert deferred.result() == "model"
    assert load.runs == 2


def test_a_failure_is_logged_by_its_type_never_its_message() -> None:
    deferred = DeferredLoad(Load(failures=1), clock=Ticks(1_000.0))
    with structlog.testing.capture_logs() as logs, unavailable_because_of(FlakyDiskError):
        deferred.result()
    assert [(e["event"], e["error"]) for e in logs] == [("model.load_failed", "FlakyDiskError")]
    assert "secret-path" not in repr(logs)


def test_a_finished_load_never_runs_anything() -> None:
    assert DeferredLoad.finished("model").result() == "model"


def test_a_model_counts_as_failing_from_its_failure_until_a_retry_loads_it() -> None:
    clock, load = Ticks(1_000.0), Load(failures=1)
    release = threading.Event()

    def held_load() -> str:
        if load.runs == 1:  # the retry waits until the test lets it go
            release.wait(timeout=60)
        return load()

    deferred = DeferredLoad(held_load, name="counted_model", clock=clock)
    assert failing_loads()["counted_model"] == 0
    with unavailable_because_of(FlakyDiskError):
        deferred.result()
    assert failing_loads()["counted_model"] == 1
    clock.now += 30.0
    deferred.start()  # the retry, held
    assert deferred.failing
    assert failing_loads()["counted_model"] == 1
    release.set()
    assert deferred.result() == "model"
    assert failing_loads()["counted_model"] == 0
