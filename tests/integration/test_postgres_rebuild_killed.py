"""A PostgreSQL rebuild SIGKILLed midway (its pages committing behind the next one, ADR 0043)
leaves views that are exactly the log's events up to the position it stored; a catch-up, or
the next rebuild, completes them. And a follower of the same views taking turns with a
rebuild leaves it to finish in turns."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import structlog.testing

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger
from factledger.bench.write.rebuild import seed_ledger
from factledger.domain.values import JsonObject
from factledger.projections.follower import Follower, Tracked, read_events
from factledger.projections.profile_projection import ProfileProjection

pytestmark = pytest.mark.integration
WORKER = Path(__file__).parent.parent / "support" / "views_rebuild_worker.py"
EVENTS, PAGE = 3_000, 10
LEDGER = "killed_rebuild_ledger"


@pytest.fixture(scope="module")
def ledger(postgres: PostgresLocation) -> Iterator[Ledger]:
    keys = PostgresKeyStore(postgres.conninfo, schema=LEDGER)
    ledger = Ledger(postgres_env(postgres, schema=LEDGER), keys=keys)
    with structlog.testing.capture_logs():
        seed_ledger(ledger, EVENTS)
    yield ledger
    ledger.close()
    keys.close()


def views_of_the_log(ledger: Ledger, *, up_to: int) -> dict[str, list[tuple[str, JsonObject]]]:
    """The views of the events up to `up_to`, projected in memory in one batch."""
    projection = ProfileProjection(InMemoryViewStore("reference"))
    events = [t for t in read_events(ledger, after=0, limit=10 * EVENTS) if t.position <= up_to]
    projection.process(events)
    return projection.dump()


def kill_midway(location: PostgresLocation, views_schema: str, store: PostgresViewStore) -> None:
    where = json.dumps(dataclasses.asdict(location))
    process = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, str(WORKER), where, LEDGER, views_schema, str(PAGE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while store.position() < EVENTS // 3:
            assert process.poll() is None, "the rebuild ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("then", ["catch-up", "rebuild"])
def test_a_killed_rebuild_leaves_the_log_up_to_its_position_and_is_completed(
    ledger: Ledger, postgres: PostgresLocation, then: str
) -> None:
    schema = f"killed_views_{then.replace('-', '_')}"
    store = PostgresViewStore(postgres.conninfo, "profile", schema=schema)
    projection = ProfileProjection(store)
    try:
        kill_midway(postgres, schema, store)
        stopped_at = store.position()
        head = int(ledger.recorder.max_notification_id() or 0)
        assert 0 < stopped_at < head
        assert projection.dump() == views_of_the_log(ledger, up_to=stopped_at)
        if then == "catch-up":
            assert Follower(ledger, [projection]).catch_up() == head - stopped_at
        else:
            assert projection.rebuild(ledger) == head
        assert store.position() == head
        assert projection.dump() == views_of_the_log(ledger, up_to=head)
    finally:
        store.close()


class TakingTurns(ProfileProjection):
    """A rebuild's projection that lets another follower of its views apply a page after its
    own second one, as a live API process would between two of its pages."""

    def __init__(self, store: PostgresViewStore, other: ProfileProjection, ledger: Ledger) -> None:
        super().__init__(store)
        self.other, self.ledger, self.batches = other, ledger, 0

    def process(self, batch: Sequence[Tracked]) -> None:
        super().process(batch)
        self.batches += 1
        if self.batches == 2:
            # The page after this one's: the other waits for this page's commit, then
            # applies it before this rebuild's next page.
            self.other.process(read_events(self.ledger, after=self.position(), limit=PAGE))


def test_a_follower_taking_a_turn_during_a_rebuild_leaves_it_to_finish_in_turns(
    ledger: Ledger, postgres: PostgresLocation
) -> None:
    handles = [
        PostgresViewStore(postgres.conninfo, "profile", schema="turns_views") for _ in range(2)
    ]
    try:
        other = ProfileProjection(handles[1])
        rebuilding = TakingTurns(handles[0], other, ledger)
        rebuilding.rebuild(ledger, page=PAGE)
        head = int(ledger.recorder.max_notification_id() or 0)
        assert rebuilding.batches > 2
        assert handles[0].position() == head
        assert rebuilding.dump() == views_of_the_log(ledger, up_to=head)
    finally:
        for handle in handles:
            handle.close()
