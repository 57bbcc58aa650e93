"""Waiting in a test for a state another thread or process brings about: polled, with a bound
that only a hang reaches (ADR 0100's amendment: a test awaits what it needs, never sleeps for
it)."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(check: Callable[[], object], limit_s: float, what: str, every_s: float = 0.1) -> float:
    """Polls `check()` (a callable returning truthy) until it holds; returns the seconds it
    took, fails past `limit_s`."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > limit_s:
            raise AssertionError(f"{what}: not within {limit_s} s")
        time.sleep(every_s)
    return time.monotonic() - started
