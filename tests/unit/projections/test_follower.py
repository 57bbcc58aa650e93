"""The follower: live polling, and several followers of one projection taking turns."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.projections.follower import Follower
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
