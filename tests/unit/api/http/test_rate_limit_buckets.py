"""Token buckets of the HTTP rate limits, on a clock the test moves."""

from __future__ import annotations

import pytest

from factledger.api.http.errors import RateLimitedError
from factledger.api.http.rate_limit import RateLimiter, TokenBuckets
from factledger.api.settings import RateLimitSettings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_gives_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    buckets = TokenBuckets(per_s=2.0, burst=3, max_keys=10, clock=clock)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    clock.now += 0.5
    assert buckets.take("a") == 0.0
    clock.now += 60  # never more than the burst
    assert [buckets.take("a") for _ in range(4)][-1] == pytest.approx(0.5)


def test_buckets_past_the_bound_drop_the_least_recently_used() -> None:
    clock = Clock()
    buckets = TokenBuckets(per_s=0.001, burst=1, max_keys=2, clock=clock)
    assert buckets.take("a") == 0.0
    assert buckets.take("b") == 0.0
    assert buckets.take("a") > 0  # a is the most recently used now
    assert buckets.take("c") == 0.0  # drops b
    assert buckets.take("a") > 0
    assert buckets.take("b") == 0.0  # b starts full again


def test_retry_after_is_a_whole_number_of_seconds_of_at_least_one() -> None:
    clock = Clock()
    settings = RateLimitSettings(principal_per_s=4, principal_burst=1)
    limiter = RateLimiter(settings, clock=clock)
    limiter.admit("t1", "p1")
    with pytest.raises(RateLimitedError) as limited:
        limiter.admit("t1", "p1")
    assert limited.value.retry_after_s == 1
    clock.now += 0.25
    limiter.admit("t1", "p1")
