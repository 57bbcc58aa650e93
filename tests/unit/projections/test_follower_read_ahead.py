"""A follower reading ahead: the next page read on a thread while this one is applied."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.ledger.ledger import Ledger
from factledger.projections.follower import Follower, Tracked, read_events
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN


def read_ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("factledger-read-ahead")]


class Recording:
    """A processor that keeps the positions it was fed."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def position(self) -> int:
        return self.seen[-1] if self.seen else 0

    def process(self, batch: Sequence[Tracked]) -> None:
        self.seen.extend(item.position for item in batch)


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


@pytest.mark.parametrize("page", [1, 2, 5, 500])
def test_reading_ahead_feeds_every_event_once_in_log_order(page: int) -> None:
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger:
        run_story(ledger, clock)
        recording = Recording()
        fed = Follower(ledger, [recording], page=page, read_ahead=True).catch_up()
        every = [item.position for item in read_events(ledger, after=0, limit=10_000)]
        assert recording.seen == every
        assert fed == len(every)
    assert read_ahead_threads() == []


def test_a_failed_page_ends_the_catch_up_and_keeps_the_pages_before_it() -> None:
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger:
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
