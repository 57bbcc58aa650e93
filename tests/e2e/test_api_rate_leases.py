"""Rate limits counted in a shared store, over HTTP (`api.http.rate_leases`, ADR 0096): two
apps on one store (two API processes' worth) admit a principal's burst in total, not more,
asking the store once per lease of tokens rather than once per request; an address locked out
by failed authentications counted in one is refused by the other once its clear answer lapses
(`ADDRESS_CLEAR_S`), and at once where the failures were counted.

The store counts on a clock that never moves (nothing refills during a test); the apps'
limiters on one the test moves (leases and clear answers lapse on it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.http.deps import ApiState
from factledger.api.http.rate_leases import ADDRESS_CLEAR_S, LEASE_S
from factledger.api.http.rate_limit import RateLimiter
from factledger.api.settings import RateLimitSettings
from factledger.application.rate_limits import InProcessRateStore, Rate

BURST = 32
# Leases of up to 4 tokens (an eighth of the burst); the tenant's limit is out of the way.
LIMITS = RateLimitSettings(
    principal_per_s=400,
    principal_burst=BURST,
    tenant_per_s=100_000,
    tenant_burst=1_000_000,
    failed_auth_per_s=0.001,
    failed_auth_burst=3,
)
FORGED = {"Authorization": "Bearer " + token(Role.SERVICE).rsplit(".", 1)[0] + ".forged"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class CountingStore(InProcessRateStore):
    """The shared store, in process, counting the round trips a real one would make."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 1_000.0)  # small: sums of 1/400 s stay exact enough
        self.round_trips = 0

    async def take(self, key: str, rate: Rate) -> float:
        self.round_trips += 1
        return await super().take(key, rate)

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]:
        self.round_trips += 1
        return await super().take_then(first, then)

    async def wait_s(self, key: str, rate: Rate) -> float:
        self.round_trips += 1
        return await super().wait_s(key, rate)


Processes = Callable[[str], tuple[httpx.AsyncClient, httpx.AsyncClient]]


@pytest.fixture
def store() -> CountingStore:
    return CountingStore()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def processes(ports: Runtime, store: CountingStore, clock: Clock) -> AsyncIterator[Processes]:
    """For a client address, a client of each of two apps sharing `store`."""
    apps = []
    for _ in range(2):
        app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=LIMITS)
        limiter = RateLimiter(LIMITS, clock=clock)
        limiter.share(store)
        state: ApiState = app.state.api
        state.limiter = limiter
        apps.append(app)
    opened: list[httpx.AsyncClient] = []

    def at(address: str) -> tuple[httpx.AsyncClient, httpx.AsyncClient]:
        for app in apps:
            transport = httpx.ASGITransport(app=app, client=(address, 40000))
            opened.append(httpx.AsyncClient(transport=transport, base_url="http://api"))
        return opened[-2], opened[-1]

    yield at
    for made in opened:
        await made.aclose()


async def status(http: httpx.AsyncClient, headers: dict[str, str] | None = None) -> int:
    return (await http.get("/v1/whoami", headers=headers)).status_code


async def test_two_processes_admit_a_principals_burst_in_total_a_round_trip_per_lease(
    processes: Processes, store: CountingStore
) -> None:
    a, b = processes("10.0.0.1")
    svc = bearer(token(Role.SERVICE, principal_id="svc-a"))
    answered = {200: 0, 429: 0}
    for _ in range(BURST):  # both processes asked alike, far past the burst in all
        for http in (a, b):
            answered[await status(http, svc)] += 1
    assert answered == {200: BURST, 429: BURST}  # every token spent once, none twice
    # Leases of 1, 2, then 4 tokens, and refusals answered locally: a third of the round
    # trips of one per request at most.
    assert store.round_trips * 3 <= 2 * BURST
    refused = await a.get("/v1/whoami", headers=svc)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    # Another principal of the tenant goes on.
    assert await status(b, bearer(token(Role.SERVICE, principal_id="svc-b"))) == 200


async def test_a_principal_seldom_seen_asks_the_store_on_every_request(
    processes: Processes, store: CountingStore, clock: Clock
) -> None:
    """A lease lapses unspent after `LEASE_S`: one request a lease period takes one token at a
    time, as without leases, and holds none for long."""
    a, _ = processes("10.0.0.1")
    svc = bearer(token(Role.SERVICE, principal_id="svc-a"))
    for _ in range(4):
        assert await status(a, svc) == 200
        clock.now += LEASE_S
    before = store.round_trips
    assert await status(a, svc) == 200
    assert store.round_trips == before + 2  # the address's check (lapsed too), one token
    # Five requests, five tokens: none taken beyond what was asked.
    key = "principal\x1ft1\x1fsvc-a"
    spent = [await store.take(key, Rate(400, BURST)) for _ in range(BURST)]
    assert spent.count(0.0) == BURST - 5


async def test_an_address_locked_out_in_one_process_is_refused_by_the_other_within_a_second(
    processes: Processes, clock: Clock
) -> None:
    a, b = processes("203.0.113.7")
    svc = bearer(token(Role.SERVICE, principal_id="svc-a"))
    assert await status(b, svc) == 200  # b found the address clear
    assert [await status(a, FORGED) for _ in range(3)] == [401] * 3
    # Where the failures were counted, refused at once, even with a valid token.
    assert await status(a, svc) == 429
    # b's clear answer holds for at most `ADDRESS_CLEAR_S`: the documented bound.
    assert await status(b, svc) == 200
    clock.now += ADDRESS_CLEAR_S
    assert await status(b, svc) == 429
    assert await status(b, FORGED) == 429
    neighbour, _ = processes("198.51.100.2")
    assert await status(neighbour, svc) == 200
