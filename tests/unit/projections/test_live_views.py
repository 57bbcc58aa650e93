"""`LiveViews`: the views follow the log with nobody reading them, and outlive a failure."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.projections.follower import Follower, Tracked
from factledger.projections.live import LiveViews
from factledger.projections.profile.projection import ProfileProjection


def eventually(check: Callable[[], bool], *, within_s: float = 30.0) -> bool:
    deadline = time.monotonic() + within_s  # generous: only a hang fails
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_commit_reaches_the_views_without_a_read() -> None:
    with Ledger(popo_env(), keys=InMemoryKeyStore()) as ledger:
        projection = ProfileProjection(InMemoryViewStore("profile"))
        live = LiveViews(Follower(ledger, [projection]), poll_s=60.0, settle_s=0.0)
        ledger.after_commit.append(live.wake)
        live.start()
        try:
            ledger.register_subject(RegisterSubject("acme", "lead", "live"))
            # The poll is a minute away: only the commit's wake-up can do this in time.
            assert eventually(lambda: projection.position() == 1, within_s=20.0)
        finally:
            live.stop()


class FailsOnce:
    """A processor whose first batch fails, as a view store that is away would."""

    name = "flaky"

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.failed = False

    def position(self) -> int:
        return self.seen[-1] if self.seen else 0

    def process(self, batch: Sequence[Tracked]) -> None:
        if not self.failed:
            self.failed = True
            raise ConnectionError
        self.seen.extend(item.position for item in batch)


def test_a_failed_catch_up_is_retried_and_the_thread_lives_on() -> None:
    with Ledger(popo_env(), keys=InMemoryKeyStore()) as ledger:
        processor = FailsOnce()
        live = LiveViews(Follower(ledger, [processor]), poll_s=0.05, settle_s=0.0)
        ledger.after_commit.append(live.wake)
        live.start()
        try:
            ledger.register_subject(RegisterSubject("acme", "lead", "one"))
            assert eventually(lambda: processor.seen == [1])
            ledger.register_subject(RegisterSubject("acme", "lead", "two"))
            assert eventually(lambda: processor.seen == [1, 2])
        finally:
            live.stop()
        assert processor.failed
