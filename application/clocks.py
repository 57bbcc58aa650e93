"""The wall clock, for production; tests use `factledger.testing.manual_clock.ManualClock`."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Timezone-aware UTC now."""

    def now(self) -> datetime:
        return datetime.now(UTC)
