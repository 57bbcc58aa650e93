"""The mirrors a process holds (ADR 0056): earned by a namespace's second search (its first
reads the database and loads nothing), by more searches the larger it is (ADR 0225), loaded
in the background after a search that reads
the database, never past `max_facts` and tried again only after `retry_seconds`, the least
recently searched evicted past the budget, idle ones dropped, a running load cancelled by
`close`, and a failed load logged by its error type while searches keep answering."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import psycopg
import pytest
import structlog
from psycopg import sql
from support.mirrors import (
    EMBEDDER,
    START,
    DatabaseSearches,
    TwoProcesses,
    reads_mirror_only,
    two_processes,
)

from factledger.adapters.pgvector.mirror import cache, feed
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:cached")
QUERY = SearchQuery("supplier orders", threshold=-1.0, limit=50)
LOADED_WITHIN_S = 10.0
BACKGROUND = MirrorSettings(inline=False, earn_after=1)


@asynccontextmanager
async def opened(
    location: PostgresLocation, settings: MirrorSettings, *namespaces: Namespace
) -> AsyncIterator[TwoProcesses]:
    async with two_processes(location, settings) as two:
        for ns in namespaces or (NS,):
            for n in range(3):
                await two.remember(ns, f"d{n}", f"orders {n} from the supplier")
        yield two


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LOADED_WITHIN_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def counted_loads(monkeypatch: pytest.MonkeyPatch) -> list[Namespace]:
    """The namespaces whose load was attempted (`feed.load` as the cache calls it)."""
    attempts: list[Namespace] = []

    async def load(db: Any, ns: Namespace, **kwargs: Any) -> Any:
        attempts.append(ns)
        return await feed.load(db, ns, **kwargs)

    monkeypatch.setattr(cache, "load", load)
    return attempts


async def test_a_search_without_a_mirror_reads_the_database_and_the_next_reads_the_mirror(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(postgres, BACKGROUND) as two:
        mirrors = two.mirrored.searcher.mirrors
        database = DatabaseSearches(two.mirrored, monkeypatch)

        first = await two.mirrored.search(NS, QUERY)

        assert len(first) == 3
        assert database.count == 1
        await until(lambda: NS in mirrors.held(), "the background load")
        reads_mirror_only(two.mirrored, monkeypatch)
        assert [h.id for h in await two.mirrored.search(NS, QUERY)] == [h.id for h in first]
        assert mirrors.loads == 1


async def test_a_namespace_searched_once_is_not_loaded_and_earns_its_mirror_by_a_second_search(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    once, again = Namespace("tenant-1:once"), Namespace("tenant-1:again")
    async with opened(postgres, MirrorSettings(inline=False), once, again) as two:
        mirrors = two.mirrored.searcher.mirrors
        attempts = counted_loads(monkeypatch)
        database = DatabaseSearches(two.mirrored, monkeypatch)

        assert len(await two.mirrored.search(once, QUERY)) == 3
        assert len(await two.mirrored.search(again, QUERY)) == 3
        assert not mirrors._loading  # one search each: nothing loads beside the searches
        assert len(await two.mirrored.search(again, QUERY)) == 3  # the second: its load starts

        assert database.count == 3
        await until(lambda: again in mirrors.held(), "the earned load")
        assert attempts == [again]
        reads_mirror_only(two.mirrored, monkeypatch)
        assert len(await two.mirrored.search(again, QUERY)) == 3


async def test_searches_further_apart_than_idle_seconds_do_not_earn_a_mirror(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cache's clock is the test's: how long a search takes on a loaded machine must not
    # decide whether two searches were within `idle_seconds` of each other.
    clock = SteppedClock()
    settings = MirrorSettings(inline=False, earn_after=2, idle_seconds=0.3)
    async with opened(postgres, settings) as two:
        monkeypatch.setattr(cache, "time", clock)
        mirrors = two.mirrored.searcher.mirrors
        attempts = counted_loads(monkeypatch)

        await two.mirrored.search(NS, QUERY)
        clock.now += settings.idle_seconds + 0.1
        await two.mirrored.search(NS, QUERY)  # the count started again: the first of two
        assert not mirrors._loading
        await two.mirrored.search(NS, QUERY)

        await until(lambda: NS in mirrors.held(), "the earned load")
        assert attempts == [NS]


async def test_a_namespace_larger_than_its_searches_have_paid_for_earns_its_mirror_later(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three facts at one search a fact: the first search's load counts them and reads none,
    # the second is counted, the third loads.
    settings = MirrorSettings(inline=False, earn_after=1, facts_per_search=1)
    async with opened(postgres, settings) as two:
        mirrors = two.mirrored.searcher.mirrors
        attempts = counted_loads(monkeypatch)

        assert len(await two.mirrored.search(NS, QUERY)) == 3
        await until(lambda: not mirrors._loading, "the first load's count")
        assert len(await two.mirrored.search(NS, QUERY)) == 3
        assert not mirrors._loading
        assert (attempts, mirrors.held(), mirrors.loads) == ([NS], {}, 0)
        assert len(await two.mirrored.search(NS, QUERY)) == 3

        await until(lambda: NS in mirrors.held(), "the load the third search earned")
        assert attempts == [NS, NS]
        reads_mirror_only(two.mirrored, monkeypatch)
        assert len(await two.mirrored.search(NS, QUERY)) == 3


async def test_a_namespace_grown_since_its_count_waits_for_the_searches_its_new_size_needs(
    postgres: PostgresLocation,
) -> None:
    settings = MirrorSettings(inline=True, earn_after=1, facts_per_search=1, earn_at_most=64)
    async with opened(postgres, settings) as two:
        mirrors = two.mirrored.searcher.mirrors
        await two.mirrored.search(NS, QUERY)  # counts 3 facts: earned at the third search
        for n in range(3, 5):
            await two.remember(NS, f"d{n}", f"orders {n} from the supplier")

        await two.mirrored.search(NS, QUERY)
        await two.mirrored.search(NS, QUERY)  # the third counts 5 now: not yet
        assert mirrors.held() == {}
        await two.mirrored.search(NS, QUERY)
        await two.mirrored.search(NS, QUERY)

        assert mirrors.held() == {NS: 5}


async def test_a_load_asked_for_outright_is_not_held_back_by_the_namespace_s_size(
    postgres: PostgresLocation,
) -> None:
    settings = MirrorSettings(inline=False, earn_after=2, facts_per_search=1)
    async with opened(postgres, settings) as two:
        mirrors = two.mirrored.searcher.mirrors

        await mirrors.load(NS)

        assert mirrors.held() == {NS: 3}


class SteppedClock:
    """`time` as the cache reads it, its monotonic clock moved by the test."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return time.perf_counter()


async def test_searches_each_within_idle_seconds_of_the_last_count_on_past_that_span(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A namespace searched every 8 s earns its mirror at its third search though the three
    # span 16 s: a mirror searched that often would be kept, so its searches are counted.
    clock = SteppedClock()
    settings = MirrorSettings(inline=True, earn_after=3, idle_seconds=10.0)
    async with opened(postgres, settings) as two:
        monkeypatch.setattr(cache, "time", clock)
        mirrors = two.mirrored.searcher.mirrors
        for _ in range(2):
            await two.mirrored.search(NS, QUERY)
            clock.now += 8.0
        assert mirrors.held() == {}

        await two.mirrored.search(NS, QUERY)

        assert mirrors.held() == {NS: 3}


def test_a_mirror_is_earned_at_the_first_search_at_the_earliest() -> None:
    with pytest.raises(ValueError, match="earn_after"):
        MirrorSettings(earn_after=0)


async def test_a_namespace_past_max_facts_is_not_mirrored_and_retried_only_later(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SteppedClock()  # five searches "within retry_seconds" however slow each is
    settings = MirrorSettings(inline=False, earn_after=1, max_facts=2, retry_seconds=0.5)
    async with opened(postgres, settings) as two:
        monkeypatch.setattr(cache, "time", clock)
        mirrors = two.mirrored.searcher.mirrors
        attempts = counted_loads(monkeypatch)

        assert len(await two.mirrored.search(NS, QUERY)) == 3
        await until(lambda: not mirrors._loading, "the load attempt")
        for _ in range(5):  # within retry_seconds: answered from the database, no new load
            assert len(await two.mirrored.search(NS, QUERY)) == 3
        assert attempts == [NS]
        assert mirrors.held() == {}

        clock.now += settings.retry_seconds
        assert len(await two.mirrored.search(NS, QUERY)) == 3
        await until(lambda: not mirrors._loading, "the retried load")
        assert attempts == [NS, NS]
        assert mirrors.held() == {}
        assert mirrors.loads == 0


async def test_past_the_budget_the_least_recently_searched_mirror_goes(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, third = (Namespace(f"tenant-1:budget-{n}") for n in range(3))
    async with opened(
        postgres, MirrorSettings(inline=True, earn_after=1), first, second, third
    ) as two:
        mirrors = two.mirrored.searcher.mirrors
        await two.mirrored.search(first, QUERY)
        size = mirrors._mirrors[first].nbytes
        # The budget counted in bytes for this test: room for two of these mirrors, not three.
        monkeypatch.setattr(cache, "_MB", 1)
        mirrors.settings = MirrorSettings(inline=True, earn_after=1, budget_mb=int(size * 2.5))

        await two.mirrored.search(second, QUERY)
        await two.mirrored.search(first, QUERY)  # `second` is now the least recently searched
        await two.mirrored.search(third, QUERY)

        assert set(mirrors.held()) == {first, third}
        assert mirrors.loads == 3


async def test_a_mirror_not_searched_for_idle_seconds_is_dropped(
    postgres: PostgresLocation,
) -> None:
    idle, busy = Namespace("tenant-1:idle"), Namespace("tenant-1:busy")
    settings = MirrorSettings(inline=True, earn_after=1, idle_seconds=0.3)
    async with opened(postgres, settings, idle, busy) as two:
        mirrors = two.mirrored.searcher.mirrors
        await two.mirrored.search(idle, QUERY)
        await asyncio.sleep(settings.idle_seconds + 0.1)

        await two.mirrored.search(busy, QUERY)

        assert set(mirrors.held()) == {busy}


async def test_close_cancels_a_running_load_and_the_pool_still_serves(
    postgres: PostgresLocation,
) -> None:
    async with opened(postgres, BACKGROUND) as two:
        mirrors = two.mirrored.searcher.mirrors
        config = two.mirrored.config
        memories = sql.Identifier(config.schema, "memories")
        async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as owner:
            # The load's first statement waits on this lock: it is running when close comes.
            await owner.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(memories))
            assert await mirrors.fresh(NS) is None  # the load starts in the background
            [loading] = mirrors._loading.values()
            await asyncio.sleep(0.5)
            assert not loading.done()

            await asyncio.wait_for(mirrors.close(), timeout=5.0)

            assert loading.cancelled()
            assert mirrors.held() == {}
            await owner.rollback()
        # What the cancelled load held went back to the pool usable, or was replaced: a
        # search of the database through the same pool answers.
        plan = replace(two.mirrored.searcher.plan, mirror=MirrorSettings(budget_mb=0))
        database = PgvectorSearcher(
            two.mirrored.db, embedder=EMBEDDER, clock=ManualClock(START), plan=plan
        )
        assert len(await database.search(NS, QUERY)) == 3


async def test_a_failed_load_is_logged_by_its_type_and_searches_still_answer(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "password=hunter2 at 10.0.0.7"  # what a driver message may carry

    async def failing_load(*_: Any, **__: Any) -> Any:
        raise psycopg.OperationalError(secret)

    async with opened(postgres, BACKGROUND) as two:
        mirrors = two.mirrored.searcher.mirrors
        monkeypatch.setattr(cache, "load", failing_load)
        with structlog.testing.capture_logs() as logs:
            assert len(await two.mirrored.search(NS, QUERY)) == 3
            await until(lambda: not mirrors._loading, "the failed load")
            assert len(await two.mirrored.search(NS, QUERY)) == 3

        [failed] = [e for e in logs if e["event"] == "pgvector.mirror_load_failed"]
        assert failed["error_type"] == "OperationalError"
        assert secret not in repr(logs)
        assert mirrors.held() == {}
        assert NS in mirrors._retry_at
