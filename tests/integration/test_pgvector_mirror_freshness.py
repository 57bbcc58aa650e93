"""A mirror is never behind the database at a search (ADR 0056): what another process writes,
forgets, expires, supersedes or drops is what this process's very next search sees, and a
namespace's mirror follows that namespace alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from support.mirrors import TwoProcesses, mirror_of, reads_mirror_only, two_processes

from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.types import Namespace, SearchHit, SearchQuery

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:mirrored")
OTHER = Namespace("tenant-1:elsewhere")
EVERYTHING = SearchQuery("supplier orders", threshold=-1.0, limit=50)


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.id for h in hits]


@pytest.fixture
async def two(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[TwoProcesses]:
    async with two_processes(postgres) as opened:
        await opened.remember(NS, "d0", "orders from the supplier every monday")
        # Every search of the mirrored process below is served by its mirror.
        reads_mirror_only(opened.mirrored, monkeypatch)
        yield opened


async def test_the_first_search_loads_the_mirror_and_serves_from_it(two: TwoProcesses) -> None:
    mirrors = two.mirrored.searcher.mirrors
    assert mirrors.held() == {}

    hits = await two.mirrored.search(NS, EVERYTHING)

    assert len(hits) == 1
    assert mirrors.held() == {NS: 1}
    assert mirrors.loads == 1


async def test_a_fact_ingested_elsewhere_is_found_by_the_next_search(two: TwoProcesses) -> None:
    await two.mirrored.search(NS, EVERYTHING)
    added = await two.remember(NS, "d1", "pays the supplier invoices by card")

    assert added in ids(await two.mirrored.search(NS, EVERYTHING))
    assert two.mirrored.searcher.mirrors.loads == 1  # followed by its changes, not reloaded


async def test_a_fact_forgotten_elsewhere_is_never_returned_again(two: TwoProcesses) -> None:
    gone = await two.remember(NS, "d1", "pays the supplier invoices by card")
    assert gone in ids(await two.mirrored.search(NS, EVERYTHING))

    await two.writer.forget(NS, [gone], reason="asked")

    assert gone not in ids(await two.mirrored.search(NS, EVERYTHING))
    shown = await two.mirrored.search(
        NS, SearchQuery(EVERYTHING.text, threshold=-1.0, limit=50, include_forgotten=True)
    )
    [forgotten] = [h for h in shown if h.id == gone]
    assert forgotten.is_forgotten
    assert "invoices" not in forgotten.text  # its words were shredded in the mirror too


async def test_a_fact_expired_elsewhere_leaves_once_the_clock_passes(two: TwoProcesses) -> None:
    expiring = await two.remember(NS, "d1", "pays the supplier invoices by card")
    await two.mirrored.search(NS, EVERYTHING)

    await two.writer.expire(NS, expiring, at=two.clock.now() + timedelta(minutes=5))
    assert expiring in ids(await two.mirrored.search(NS, EVERYTHING))
    two.clock.advance(timedelta(minutes=5))  # the expiry itself: no longer current

    assert expiring not in ids(await two.mirrored.search(NS, EVERYTHING))


async def test_a_slot_superseded_elsewhere_leaves_the_old_fact_not_current(
    two: TwoProcesses,
) -> None:
    old = await two.remember(NS, "d1", "the supplier is Acme", slot="supplier")
    assert old in ids(await two.mirrored.search(NS, EVERYTHING))

    new = await two.remember(NS, "d2", "the supplier is Globex", slot="supplier")

    current = ids(await two.mirrored.search(NS, EVERYTHING))
    assert new in current
    assert old not in current
    history = await two.mirrored.search(
        NS, SearchQuery(EVERYTHING.text, threshold=-1.0, limit=50, include_superseded=True)
    )
    [superseded] = [h for h in history if h.id == old]
    assert not superseded.is_latest


async def test_a_namespace_dropped_elsewhere_reloads_the_mirror_empty(two: TwoProcesses) -> None:
    await two.mirrored.search(NS, EVERYTHING)
    before = mirror_of(two.mirrored, NS).epoch

    await two.writer.drop_namespace(NS)

    assert await two.mirrored.search(NS, EVERYTHING) == []
    mirrors = two.mirrored.searcher.mirrors
    assert mirrors.loads == 2  # a deletion cannot be followed row by row: a new load
    assert mirror_of(two.mirrored, NS).epoch != before
    assert mirrors.held() == {NS: 0}


async def test_writes_to_another_namespace_leave_this_mirror_untouched(
    two: TwoProcesses,
) -> None:
    await two.mirrored.search(NS, EVERYTHING)
    mirror = mirror_of(two.mirrored, NS)
    version = mirror.version

    intruder = await two.remember(OTHER, "d1", "orders from the supplier every monday")
    await two.writer.forget(OTHER, [intruder], reason="asked")

    hits = await two.mirrored.search(NS, EVERYTHING)
    assert intruder not in ids(hits)
    assert len(hits) == 1
    assert mirror_of(two.mirrored, NS) is mirror
    assert mirror.version == version
    assert two.mirrored.searcher.mirrors.loads == 1
    assert len(mirror) == 1
