"""The HTTP rate limits' arithmetic and their per-process fallback, on a clock the test moves."""

from __future__ import annotations

import asyncio

import pytest

from factledger.api.http import rate_limit
from factledger.api.http.errors import RateLimitedError
from factledger.api.http.rate_limit import RateLimiter
from factledger.api.settings import RateLimitSettings
from factledger.api.settings.access import DEFAULT_ROLE_RATES, RoleRateSettings
from factledger.application.rate_limits import InProcessRateStore, Rate, RateStoreUnavailableError


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_gives_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    store = InProcessRateStore(max_keys=10, clock=clock)
    rate = Rate(per_s=2.0, burst=3)
    assert [store.take_now("a", rate) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert store.take_now("a", rate) == pytest.approx(0.5)
    assert store.wait_now("a", rate) == pytest.approx(0.5)
    clock.now += 0.5
    assert store.take_now("a", rate) == 0.0
    clock.now += 60  # never more than the burst
    assert [store.take_now("a", rate) for _ in range(4)][-1] == pytest.approx(0.5)


def test_keys_past_the_bound_drop_the_least_recently_used() -> None:
    clock = Clock()
    store = InProcessRateStore(max_keys=2, clock=clock)
    rate = Rate(per_s=0.001, burst=1)
    assert store.take_now("a", rate) == 0.0
    assert store.take_now("b", rate) == 0.0
    assert store.take_now("a", rate) > 0  # a is the most recently used now
    assert store.take_now("c", rate) == 0.0  # drops b
    assert store.take_now("a", rate) > 0
    assert store.take_now("b", rate) == 0.0  # b starts full again


async def test_retry_after_is_a_whole_number_of_seconds_of_at_least_one() -> None:
    clock = Clock()
    settings = RateLimitSettings(principal_per_s=4, principal_burst=1)
    limiter = RateLimiter(settings, clock=clock)
    await limiter.admit("t1", "p1", "service")
    with pytest.raises(RateLimitedError) as limited:
        await limiter.admit("t1", "p1", "service")
    assert limited.value.retry_after_s == 1
    clock.now += 0.25
    await limiter.admit("t1", "p1", "service")


def test_each_role_has_its_own_default_and_the_service_principal_the_largest() -> None:
    limits = RateLimitSettings()
    rates = {role: limits.role_rate(role) for role in DEFAULT_ROLE_RATES}
    assert rates == DEFAULT_ROLE_RATES
    service = rates["service"]
    assert all(service.per_s >= rate.per_s for rate in rates.values())
    # One process serves several hundred writes a second: the platform's one service
    # principal is not throttled below that, and its tenant admits at least as much.
    assert service.per_s >= 1000
    assert limits.tenant_per_s >= service.per_s
    assert limits.tenant_burst >= service.burst


def test_a_role_entry_wins_over_the_flat_principal_limit() -> None:
    limits = RateLimitSettings(
        principal_per_s=7,
        principal_burst=9,
        roles={"agent": RoleRateSettings(per_s=1, burst=2)},
    )
    assert limits.role_rate("agent") == RoleRateSettings(per_s=1, burst=2)
    assert limits.role_rate("service") == RoleRateSettings(per_s=7, burst=9)


class BrokenStore:
    def __init__(self) -> None:
        self.calls = 0

    async def take(self, key: str, rate: Rate) -> float:
        self.calls += 1
        raise RateStoreUnavailableError("down")

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]:
        self.calls += 1
        raise RateStoreUnavailableError("down")

    async def wait_s(self, key: str, rate: Rate) -> float:
        self.calls += 1
        raise RateStoreUnavailableError("down")


class StalledStore(BrokenStore):
    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]:
        self.calls += 1
        await asyncio.sleep(30)
        return 0.0, 0.0


async def test_a_failing_shared_store_leaves_each_process_counting_on_its_own() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimitSettings(principal_per_s=0.001, principal_burst=2), clock=clock)
    broken = BrokenStore()
    limiter.share(broken)
    await limiter.admit("t1", "p1", "agent")
    await limiter.admit("t1", "p1", "agent")
    with pytest.raises(RateLimitedError):
        await limiter.admit("t1", "p1", "agent")
    # Asked once, then left alone for a while rather than on every request.
    assert broken.calls == 1


async def test_a_stalled_shared_store_costs_a_request_its_bound_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rate_limit, "SHARED_WITHIN_S", 0.05)
    limiter = RateLimiter(RateLimitSettings())
    stalled = StalledStore()
    limiter.share(stalled)
    await asyncio.wait_for(limiter.admit("t1", "p1", "agent"), timeout=10)
    await limiter.admit("t1", "p1", "agent")
    assert stalled.calls == 1
