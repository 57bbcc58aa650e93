"""Retry schedules for work whose attempts are counted in a store, not in a loop.

A sync item's attempts live in the sync store and a webhook delivery's in the delivery log, so
that a retry survives a restart and any worker may make it; tenacity's in-process loop cannot
carry that. Its stop and wait strategies still decide, from the stored count, whether another
attempt comes and after how long, so every retry in the service follows one library's rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tenacity
from tenacity import RetryCallState


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    """`max_attempts` tries in all; try `n + 1` comes `backoff_s * 2**(n - 1)` after try `n`
    failed, at most `max_backoff_s`."""

    max_attempts: int
    backoff_s: float
    max_backoff_s: float = math.inf

    def wait_after(self, attempts: int) -> float | None:
        """Seconds to wait after `attempts` failed tries; None when that was the last one."""
        state = RetryCallState(tenacity.Retrying(), None, (), {})
        state.attempt_number = attempts
        if tenacity.stop_after_attempt(self.max_attempts)(state):
            return None
        wait = tenacity.wait_exponential(multiplier=self.backoff_s, max=self.max_backoff_s)
        return float(wait(state))
