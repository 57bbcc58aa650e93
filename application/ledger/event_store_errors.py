"""The ledger's event store reports a database it cannot reach as `EventStoreUnavailableError`.

The store is the `eventsourcing` library's recorder, read by the use cases, the projections'
followers, the sync feed and recall's sources alike. Its database failures are translated on
the recorder itself, so every one of those readers raises the application's error, never the
library's. An `IntegrityError` (a concurrent writer won) is not a failure of the database and
passes unchanged: the ledger retries it. A disk that is full or read-only becomes
`StorageFullError` or `StorageReadOnlyError`, whichever class of the library's errors carried it
(PostgreSQL reports a read-only transaction as an internal error).
"""

from __future__ import annotations

import functools
import time
import types
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from eventsourcing.persistence import (
    ApplicationRecorder,
    IntegrityError,
    InterfaceError,
    OperationalError,
    PersistenceError,
)

from factledger.application.errors import StoreUnavailableError, storage_failure

P = ParamSpec("P")
T = TypeVar("T")
UNREACHABLE = (OperationalError, InterfaceError)
# A failure faster than this is a dropped connection, worth one retry; slower, the pool waited.
QUICK_FAILURE_S = 0.5
RETRY_PAUSE_S = 0.1
RECORDER_CALLS = ("insert_events", "select_events", "select_notifications", "max_notification_id")


class EventStoreUnavailableError(StoreUnavailableError):
    """The ledger's event store failed; the library's error is kept as `__cause__`."""


def unavailable() -> EventStoreUnavailableError:
    return EventStoreUnavailableError("event store failed")


def translated(call: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(call)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return _retried_once_if_quick(call, *args, **kwargs)
        except IntegrityError:
            raise
        except PersistenceError as exc:
            storage = storage_failure(exc)
            if storage is not None:
                raise storage(f"event store: {storage.__name__}") from exc
            if isinstance(exc, UNREACHABLE):
                raise unavailable() from exc
            raise

    return wrapper


def _retried_once_if_quick(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """One retry, and only after a failure that came at once (a connection dropped between
    the pool's check and its use); a failure that took its time (the pool waited in vain for a
    connection: the database is away) is final, so no caller waits twice."""
    started = time.monotonic()
    try:
        return call(*args, **kwargs)
    except UNREACHABLE:
        if time.monotonic() - started > QUICK_FAILURE_S:
            raise
    time.sleep(RETRY_PAUSE_S)
    return call(*args, **kwargs)


def _without_library_retry(recorder: ApplicationRecorder, name: str) -> Callable[..., object]:
    # The library's PostgreSQL recorder retries each call ten times, each attempt waiting up
    # to the pool's timeout: a database that is down held a request for 10 x that. The
    # undecorated method (`functools.wraps` keeps it as `__wrapped__`) plus our single quick
    # retry bound the wait to one pool timeout.
    method = getattr(recorder, name)
    inner = getattr(method, "__wrapped__", None)
    if inner is None:
        return cast("Callable[..., object]", method)
    return cast("Callable[..., object]", types.MethodType(inner, recorder))


def reporting_unavailability(recorder: ApplicationRecorder) -> ApplicationRecorder:
    """`recorder`, its database calls raising `EventStoreUnavailableError` on failure, within
    one wait for a connection."""
    for name in RECORDER_CALLS:
        if not hasattr(recorder, name):
            continue
        setattr(recorder, name, translated(_without_library_retry(recorder, name)))
    return recorder
