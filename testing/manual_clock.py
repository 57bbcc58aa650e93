"""A `Clock` that only moves when a test moves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ManualClock:
    """Starts at a fixed instant (timezone-aware); `advance` and `set` move it."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> datetime:
        self._now += delta
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when
