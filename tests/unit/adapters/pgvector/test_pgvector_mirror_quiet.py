"""A mirror's load gives way to the searches under way (ADR 0102): each of its steps waits
until none is, for a bounded time."""

from __future__ import annotations

import asyncio
import contextlib

from factledger.adapters.pgvector.mirror.quiet import SearchesInFlight


async def test_with_no_search_under_way_a_step_goes_at_once() -> None:
    searches = SearchesInFlight(max_wait_s=60.0)

    await asyncio.wait_for(searches.quiet(), timeout=5.0)

    assert searches.count == 0


async def test_a_step_waits_for_every_search_under_way_to_finish() -> None:
    searches = SearchesInFlight(max_wait_s=60.0)
    with contextlib.ExitStack() as first:
        first.enter_context(searches.searching())
        with searches.searching():
            step = asyncio.ensure_future(searches.quiet())
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)
        waiting_for_one = not step.done()
    await asyncio.wait_for(step, timeout=5.0)

    assert waiting_for_one
    assert searches.count == 0


async def test_a_step_waits_no_longer_than_its_bound_under_steady_traffic() -> None:
    searches = SearchesInFlight(max_wait_s=0.01)

    with searches.searching():
        await asyncio.wait_for(searches.quiet(), timeout=5.0)  # goes although one is under way

        assert searches.count == 1


async def test_a_failed_search_is_no_longer_counted() -> None:
    searches = SearchesInFlight(max_wait_s=60.0)

    with contextlib.suppress(RuntimeError), searches.searching():
        raise RuntimeError("search failed")

    assert searches.count == 0
    await asyncio.wait_for(searches.quiet(), timeout=5.0)
