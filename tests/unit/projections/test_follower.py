"""The follower: live polling, and several followers of one projection taking turns."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.cipher import PREFIX
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.domain.events import SessionRecorded
from factledger.projections.follower import Follower, Tracked
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN, TENANT


@pytest.mark.parametrize("read_ahead", [False, True], ids=["in-turn", "reading-ahead"])
def test_two_followers_of_one_projection_never_apply_an_event_twice(
    twin_stores: list[ViewStore], read_ahead: bool
) -> None:
    # Reading ahead, a follower whose twin moved the position meanwhile reads from there.
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger:
        ids = run_story(ledger, clock)
        projections = [ProfileProjection(store) for store in twin_stores]
        followers = [Follower(ledger, [p], page=2, read_ahead=read_ahead) for p in projections]
        threads = [threading.Thread(target=f.catch_up) for f in followers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        together = projections[0].dump()
        single = ProfileProjection(InMemoryViewStore("single"))
        Follower(ledger, [single]).catch_up()
        assert together == single.dump()
        assert ViewStoreProfileReader(twin_stores[1]).current(TENANT, ids.subject_id).version == 5


def test_a_running_follower_picks_up_new_events(tmp_path: Path) -> None:
    with Ledger(popo_env(), keys=InMemoryKeyStore()) as ledger:
        store = SqliteViewStore(tmp_path / "views.sqlite", "profile")
        reader = ViewStoreProfileReader(store)
        follower = Follower(ledger, [ProfileProjection(store)])
        stop = threading.Event()
        worker = threading.Thread(target=follower.run, args=(stop,), kwargs={"poll_s": 0.01})
        worker.start()
        try:
            ledger.register_subject(RegisterSubject("acme", "lead", "live"))
            deadline = time.monotonic() + 30  # generous: only a hang fails this test
            while not reader.subjects("acme") and time.monotonic() < deadline:
                time.sleep(0.01)
            assert [s.external_ref for s in reader.subjects("acme")] == ["live"]
        finally:
            stop.set()
            worker.join()
            store.close()


class _Said:
    """A processor that keeps the message texts of the sessions it is fed."""

    def __init__(self, name: str, *, reads_words: bool) -> None:
        self.name, self.reads_transcript_text = name, reads_words
        self.texts: list[object] = []
        self._position = 0

    def position(self) -> int:
        return self._position

    def process(self, batch: Sequence[Tracked]) -> None:
        for item in batch:
            if isinstance(item.event, SessionRecorded):
                self.texts += [line["text"] for line in item.event.transcript or []]
        self._position = batch[-1].position


@pytest.mark.parametrize("read_ahead", [False, True], ids=["in-turn", "reading-ahead"])
def test_the_words_stay_sealed_only_for_a_follower_whose_processors_all_skip_them(
    read_ahead: bool,
) -> None:
    clock = ManualClock(JAN)
    with Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()) as ledger:
        run_story(ledger, clock)
        skipping = _Said("skipping", reads_words=False)
        Follower(ledger, [skipping], page=2, read_ahead=read_ahead).catch_up()
        mixed = [_Said("reading", reads_words=True), _Said("beside", reads_words=False)]
        Follower(ledger, mixed, page=2, read_ahead=read_ahead).catch_up()
    assert skipping.texts
    assert all(isinstance(t, str) and t.startswith(PREFIX) for t in skipping.texts)
    for processor in mixed:  # one reader of the words: every processor gets them
        assert len(processor.texts) == len(skipping.texts)
        assert not any(isinstance(t, str) and t.startswith(PREFIX) for t in processor.texts)
        assert any(isinstance(t, str) and t for t in processor.texts)
