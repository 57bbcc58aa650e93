"""A mirror never answers for a database it cannot reach (ADR 0056): with the server down, a
search of a mirrored namespace fails with the port's error within the pool's timeouts instead
of serving what may be stale, and once the server is back it serves again, up to date. A
server that stalls costs recall its budget (it then fails open), and nothing after it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from support.crash import CrashablePostgres
from support.mirrors import TwoProcesses, mirror_of, reads_mirror_only, two_processes

from factledger.application.errors import MemoryTimeoutError, MemoryUnavailableError
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.application.recall.deadline import Lookup, run_within
from factledger.application.recall.types import Degraded

pytestmark = [pytest.mark.integration, pytest.mark.serial]
T = TypeVar("T")
NS = Namespace("tenant-1:outage")
QUERY = SearchQuery("supplier orders", threshold=-1.0, limit=50)
# The pool's acquire and connect timeouts (`PoolOptions`: 3 s each) and some slack.
ANSWER_WITHIN_S = 10.0
HEAL_WITHIN_S = 20.0


async def mirrored_fact(two: TwoProcesses, monkeypatch: pytest.MonkeyPatch) -> str:
    """One fact written, and found through the mirror, which alone serves searches after."""
    known = await two.remember(NS, "d0", "orders from the supplier every monday")
    assert [h.id for h in await two.mirrored.search(NS, QUERY)] == [known]
    reads_mirror_only(two.mirrored, monkeypatch)
    return known


async def once_healed(attempt: Callable[[], Awaitable[T]], deadline: float, who: str) -> T:
    """`attempt`'s result once the pool has healed, retried until `deadline`."""
    while True:
        try:
            return await attempt()
        except (MemoryUnavailableError, MemoryTimeoutError):
            assert time.monotonic() < deadline, f"the {who} pool did not heal"
            await asyncio.sleep(0.2)


async def test_a_mirrored_search_fails_while_the_database_is_down_then_serves_again(
    crashable: CrashablePostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with two_processes(crashable.location) as two:
        known = await mirrored_fact(two, monkeypatch)
        mirror = mirror_of(two.mirrored, NS)

        await asyncio.to_thread(crashable.kill)
        for _ in range(2):  # a dead pooled connection, then a failed connect: both answer
            started = time.monotonic()
            with pytest.raises((MemoryUnavailableError, MemoryTimeoutError)):
                await asyncio.wait_for(two.mirrored.search(NS, QUERY), timeout=ANSWER_WITHIN_S)
            assert time.monotonic() - started < ANSWER_WITHIN_S

        await asyncio.to_thread(crashable.restart)
        deadline = time.monotonic() + HEAL_WITHIN_S
        added = await once_healed(
            lambda: two.remember(NS, "d1", "pays the supplier invoices by card"),
            deadline,
            "writer's",
        )
        hits = await once_healed(
            lambda: two.mirrored.search(NS, QUERY), deadline, "mirrored process's"
        )
        # The same mirror, brought up to date by the write made after the restart.
        assert {h.id for h in hits} == {known, added}
        assert mirror_of(two.mirrored, NS) is mirror


# Recall's budget per turn (`RecallPolicy.recall_budget_s`).
TURN_BUDGET_S = 1.0


async def test_a_stalled_server_costs_recall_its_budget_and_nothing_after(
    crashable: CrashablePostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with two_processes(crashable.location) as two:
        known = await mirrored_fact(two, monkeypatch)
        mirror = mirror_of(two.mirrored, NS)
        version = mirror.version

        async def lookup() -> None:
            await two.mirrored.search(NS, QUERY)

        await asyncio.to_thread(crashable.freeze)
        try:
            started = time.monotonic()
            # As recall runs its lookups: cancelled at the deadline and not awaited after it
            # (psycopg's cancel of a query on a stalled server takes seconds of its own).
            memories = Lookup("memories", lookup, Degraded.BACKEND_ERROR)
            failed = await run_within(TURN_BUDGET_S, [memories])
            assert failed == {"memories": Degraded.TIMEOUT}
            assert time.monotonic() - started < TURN_BUDGET_S + 0.5
            assert mirror.version == version  # nothing half-applied
        finally:
            await asyncio.to_thread(crashable.thaw)

        added = await two.remember(NS, "d1", "pays the supplier invoices by card")
        hits = await once_healed(
            lambda: two.mirrored.search(NS, QUERY),
            time.monotonic() + HEAL_WITHIN_S,
            "mirrored process's",
        )
        assert {h.id for h in hits} == {known, added}
        assert mirror_of(two.mirrored, NS) is mirror
