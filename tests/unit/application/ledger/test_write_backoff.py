"""The pause after a save lost to a concurrent writer: random below a ceiling that doubles per
attempt up to a cap, so writers that keep colliding spread further apart each time."""

from __future__ import annotations

from itertools import pairwise

import pytest

from factledger.application.ledger import core
from factledger.application.ledger.core import (
    FIRST_BACKOFF_S,
    LONGEST_BACKOFF_S,
    MAX_ATTEMPTS,
    back_off,
)


def test_the_ceiling_doubles_per_attempt_up_to_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    ceilings: list[float] = []
    slept: list[float] = []
    monkeypatch.setattr(core.random, "uniform", lambda low, high: ceilings.append(high) or high)
    monkeypatch.setattr(core.time, "sleep", slept.append)
    for attempt in range(MAX_ATTEMPTS):
        back_off(attempt)
    assert ceilings[:3] == [FIRST_BACKOFF_S, 2 * FIRST_BACKOFF_S, 4 * FIRST_BACKOFF_S]
    assert all(b >= a for a, b in pairwise(ceilings))
    assert max(ceilings) == LONGEST_BACKOFF_S
    assert slept == ceilings
    # A writer that loses every time waits a few seconds at most before it gives up.
    assert sum(ceilings) < 3.0
