"""The clock port, and the wall clock that serves it in production; tests use
`factledger.testing.manual_clock.ManualClock`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class SystemClock:
    """Timezone-aware UTC now."""

    def now(self) -> datetime:
        return datetime.now(UTC)


def epoch_microseconds(at: datetime) -> int:
    """Microseconds since the epoch, exact, unlike a float timestamp: an expiry equal to `now`
    must compare equal (the array searches' visibility: in-memory, a pgvector mirror)."""
    return (at - _EPOCH) // _MICROSECOND


class Clock(Protocol):
    """The current time, passed in so the domain and the use cases stay deterministic."""

    def now(self) -> datetime: ...
