"""Reading ahead: pages read on a thread several pages before they are applied."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.ledger.ledger import Ledger
from factledger.projections.follower import Follower, Tracked, read_events
from factledger.projections.page_reader import PageReader
from factledger.projections.profile_projection import ProfileProjection
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN


def numbers(after: int, *, last: int, page: int) -> list[int]:
    return list(range(after + 1, min(after + page, last) + 1))


def reader_of(last: int, *, page: int, depth: int = 2) -> PageReader[int]:
    return PageReader(
        lambda after: numbers(after, last=last, page=page),
        lambda n: n,
        after=0,
        page=page,
        depth=depth,
    )


def read_ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "factledger-read-ahead"]


def test_pages_come_in_order_each_once_until_a_short_page() -> None:
    reader = reader_of(10, page=3)
    try:
        pages = [reader.next_page() for _ in range(4)]
    finally:
        reader.close()
    assert pages == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10]]


def test_an_error_of_the_read_is_raised_to_the_caller_after_the_pages_before_it() -> None:
    def read(after: int) -> list[int]:
        if after >= 4:
            raise RuntimeError("read failed")
        return numbers(after, last=100, page=2)

    reader = PageReader(read, lambda n: n, after=0, page=2)
    try:
        assert reader.next_page() == [1, 2]
        assert reader.next_page() == [3, 4]
        with pytest.raises(RuntimeError, match="read failed"):
            reader.next_page()
    finally:
        reader.close()
    assert read_ahead_threads() == []


def test_closing_a_reader_blocked_on_a_full_queue_ends_its_thread() -> None:
    reader = reader_of(1_000_000, page=1, depth=1)
    assert reader.next_page() == [1]
    reader.close()
    assert read_ahead_threads() == []


class FailingAt:
    """A profile projection that fails while applying the page holding `position`."""

    def __init__(self, store: InMemoryViewStore, position: int) -> None:
        self.inner, self.fail_at = ProfileProjection(store), position
        self.name = store.name

    def position(self) -> int:
        return self.inner.position()

    def process(self, batch: Sequence[Tracked]) -> None:
        if any(item.position == self.fail_at for item in batch):
            raise RuntimeError("apply failed")
        self.inner.process(batch)


def test_a_failed_page_stops_reading_and_keeps_the_pages_before_it() -> None:
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock) as ledger:
        run_story(ledger, clock)
        events = read_events(ledger, after=0, limit=1_000)
        failing = FailingAt(InMemoryViewStore("failing"), events[7].position)
        with pytest.raises(RuntimeError, match="apply failed"):
            Follower(ledger, [failing], page=3, read_ahead=True).catch_up()
        assert read_ahead_threads() == []
        # Pages of 3: the first two were applied whole, nothing of the third.
        assert failing.position() == events[5].position
        fed_in_turn = ProfileProjection(InMemoryViewStore("in-turn"))
        fed_in_turn.process(events[:6])
        assert failing.inner.dump() == fed_in_turn.dump()


@pytest.mark.parametrize("page", [1, 2, 5, 500])
def test_reading_ahead_feeds_every_event_in_log_order(page: int) -> None:
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock) as ledger:
        run_story(ledger, clock)
        seen: list[int] = []

        class Recording:
            name = "recording"

            def position(self) -> int:
                return seen[-1] if seen else 0

            def process(self, batch: Sequence[Tracked]) -> None:
                seen.extend(item.position for item in batch)

        fed = Follower(ledger, [Recording()], page=page, read_ahead=True).catch_up()
        every = [item.position for item in read_events(ledger, after=0, limit=10_000)]
        assert seen == every
        assert fed == len(every)
