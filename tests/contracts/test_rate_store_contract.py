"""Contract of the `RateStore` port (`application.rate_limits`), over every adapter: in
process, SQLite and PostgreSQL (integration; each test in its own schema).

Two handles on one SQLite file or PostgreSQL schema stand for two API processes: a key's
burst holds across them. PostgreSQL keeps the server's time, so its tests use rates slow
enough that nothing refills during a test; the others run on a clock the test moves.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from factledger.adapters.postgres.rate_store import PostgresRateStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.rate_store import SqliteRateStore
from factledger.application.rate_limits import InProcessRateStore, Rate, RateStore

SHARED = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_process", id="in-process"), *SHARED]
SLOW = Rate(per_s=0.001, burst=3)  # a request every 1000 s: nothing refills during a test


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def open_pair(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> tuple[RateStore, RateStore, list[object]]:
    if kind == "in_process":
        one = InProcessRateStore(clock=clock)
        return one, one, []
    if kind == "sqlite":
        a, b = (SqliteRateStore(tmp_path / "limits.sqlite", clock=clock) for _ in range(2))
        return a, b, [a, b]
    location: PostgresLocation = request.getfixturevalue("postgres")
    schema = f"limits_{uuid.uuid4().hex[:10]}"
    a = await PostgresRateStore.connect(location.conninfo, schema=schema)
    b = await PostgresRateStore.connect(location.conninfo, schema=schema)
    return a, b, [a, b]


@asynccontextmanager
async def opened_pair(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> AsyncIterator[tuple[RateStore, RateStore]]:
    a, b, opened = await open_pair(kind, request, tmp_path, clock)
    try:
        yield a, b
    finally:
        for store in opened:
            closing = store.close()  # type: ignore[attr-defined]
            if asyncio.iscoroutine(closing):
                await closing


@pytest.fixture(params=ADAPTERS)
async def pair(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> AsyncIterator[tuple[RateStore, RateStore]]:
    async with opened_pair(request.param, request, tmp_path, clock) as stores:
        yield stores


@pytest.fixture(params=SHARED)
async def shared_pair(
    request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> AsyncIterator[tuple[RateStore, RateStore]]:
    async with opened_pair(request.param, request, tmp_path, clock) as stores:
        yield stores


async def test_a_key_admits_its_burst_then_says_how_long_to_wait(
    pair: tuple[RateStore, RateStore],
) -> None:
    store, _ = pair
    assert [await store.take("k", SLOW) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await store.take("k", SLOW) == pytest.approx(1000, rel=0.01)
    assert await store.wait_s("k", SLOW) == pytest.approx(1000, rel=0.01)
    assert await store.take("other", SLOW) == 0.0  # keys are counted apart


async def test_an_unknown_key_waits_for_nothing(pair: tuple[RateStore, RateStore]) -> None:
    store, _ = pair
    assert await store.wait_s("never-seen", SLOW) == 0.0


async def test_a_refused_request_counts_nothing(pair: tuple[RateStore, RateStore]) -> None:
    store, _ = pair
    for _ in range(3):
        await store.take("k", SLOW)
    waits = [await store.take("k", SLOW) for _ in range(5)]
    assert waits == pytest.approx([1000] * 5, rel=0.01)  # no refusal pushes the next one back


async def test_two_processes_share_one_burst(
    shared_pair: tuple[RateStore, RateStore],
) -> None:
    a, b = shared_pair
    rate = Rate(per_s=0.001, burst=10)
    waits = await asyncio.gather(*(store.take("k", rate) for store in (a, b) for _ in range(10)))
    assert sorted(w == 0.0 for w in waits).count(True) == 10
    assert await a.wait_s("k", rate) > 0
    assert await b.wait_s("k", rate) > 0


@pytest.mark.parametrize("kind", ["in_process", "sqlite"])
async def test_a_key_refills_at_its_rate(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> None:
    store, _, opened = await open_pair(kind, request, tmp_path, clock)
    rate = Rate(per_s=2.0, burst=3)
    assert [await store.take("k", rate) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await store.take("k", rate) == pytest.approx(0.5)
    clock.now += 0.5
    assert await store.take("k", rate) == 0.0
    clock.now += 60  # never more than the burst
    assert [await store.take("k", rate) for _ in range(4)][-1] == pytest.approx(0.5)
    for handle in opened:
        handle.close()  # type: ignore[attr-defined]


async def test_sqlite_prunes_the_keys_whose_time_has_passed(tmp_path: Path, clock: Clock) -> None:
    store = SqliteRateStore(tmp_path / "limits.sqlite", clock=clock)
    try:
        await store.take("old", Rate(per_s=1.0, burst=5))
        await store.take("new", SLOW)
        clock.now += 2
        assert await store.prune() == 1
        assert await store.wait_s("new", SLOW) == 0.0  # one of its three left: no wait
    finally:
        store.close()


async def test_the_second_key_is_counted_only_when_the_first_admits(
    pair: tuple[RateStore, RateStore],
) -> None:
    store, _ = pair
    principal, tenant = ("principal", Rate(per_s=0.001, burst=2)), ("tenant", SLOW)
    assert await store.take_then(principal, tenant) == (0.0, 0.0)
    assert await store.take_then(principal, tenant) == (0.0, 0.0)
    refused, untouched = await store.take_then(principal, tenant)
    assert refused == pytest.approx(1000, rel=0.01)
    assert untouched == 0.0
    # The tenant spent two of its three: one left, then it refuses.
    assert await store.take_then(("another", SLOW), tenant) == (0.0, 0.0)
    admitted, tenant_wait = await store.take_then(("a third", SLOW), tenant)
    assert admitted == 0.0
    assert tenant_wait == pytest.approx(1000, rel=0.01)


async def test_a_take_of_several_tokens_is_all_or_nothing(
    pair: tuple[RateStore, RateStore],
) -> None:
    """A lease (`Rate.times`): several requests counted at once when the key has them all,
    none counted otherwise, and the wait is for all of them."""
    store, other = pair
    rate = Rate(per_s=0.001, burst=5)
    assert await store.take_then(("k", rate.times(3)), ("t", SLOW.times(3))) == (0.0, 0.0)
    refused = await other.take("k", rate.times(3))  # two left: not three
    assert refused == pytest.approx(1000, rel=0.01)
    assert await other.take("k", rate.times(2)) == 0.0  # the refusal counted nothing
    assert await store.take("k", rate) == pytest.approx(1000, rel=0.01)
    # The tenant's three went in the one take.
    assert await store.wait_s("t", SLOW) == pytest.approx(1000, rel=0.01)
