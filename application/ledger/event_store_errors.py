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
from collections.abc import Callable
from typing import ParamSpec, TypeVar

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
RECORDER_CALLS = ("insert_events", "select_events", "select_notifications", "max_notification_id")


class EventStoreUnavailableError(StoreUnavailableError):
    """The ledger's event store failed; the library's error is kept as `__cause__`."""


def unavailable() -> EventStoreUnavailableError:
    return EventStoreUnavailableError("event store failed")


def translated(call: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(call)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return call(*args, **kwargs)
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


def reporting_unavailability(recorder: ApplicationRecorder) -> ApplicationRecorder:
    """`recorder`, its database calls raising `EventStoreUnavailableError` on failure."""
    for name in RECORDER_CALLS:
        setattr(recorder, name, translated(getattr(recorder, name)))
    return recorder
