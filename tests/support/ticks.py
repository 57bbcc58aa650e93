"""`Ticks`: a monotonic clock, in seconds, for leases, backoffs and pauses, that a test moves by
hand (`ticks.now += 60`) instead of waiting."""

from __future__ import annotations


class Ticks:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
