"""The schedule of retries counted in a store (sync items, webhook deliveries): doubling waits
up to a cap, and no wait at all once the last attempt has failed."""

from __future__ import annotations

import pytest

from factledger.application.retry_schedule import RetrySchedule


def test_waits_double_from_the_first_backoff() -> None:
    schedule = RetrySchedule(max_attempts=5, backoff_s=0.5)
    assert [schedule.wait_after(n) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]


def test_waits_stop_growing_at_the_cap() -> None:
    schedule = RetrySchedule(max_attempts=10, backoff_s=1.0, max_backoff_s=5.0)
    assert [schedule.wait_after(n) for n in (1, 2, 3, 4, 9)] == [1.0, 2.0, 4.0, 5.0, 5.0]


@pytest.mark.parametrize("attempts", [3, 4, 100])
def test_there_is_no_wait_after_the_last_attempt(attempts: int) -> None:
    assert RetrySchedule(max_attempts=3, backoff_s=0.5).wait_after(attempts) is None


def test_a_single_attempt_is_never_retried() -> None:
    assert RetrySchedule(max_attempts=1, backoff_s=0.5).wait_after(1) is None
