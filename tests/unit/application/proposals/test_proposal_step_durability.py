"""The proposal step after the session commits: rerun, restart, crash and failure leave the
same proposals, and a failing session becomes a dead letter (or, while its extractor is away,
waits for it), never a lost one."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.ports import Extractor
from factledger.application.sync.types import SyncKind
from factledger.domain.transcript import Role

from .conftest import Rig, day

LEAD = Role.SUBJECT
LINES = (
    (LEAD, "Right now we order from Initech. Our budget is 40k a year."),
    (LEAD, "We are unhappy with the invoicing portal."),
)


class Failing:
    """Fails with `error` (by default a fault of the extractor's own, no outage), or crashes
    the worker, on its first `failures` calls, then extracts."""

    def __init__(
        self,
        inner: Extractor,
        failures: int,
        *,
        crash: bool = False,
        error: type[Exception] = RuntimeError,
    ) -> None:
        self.inner, self.failures, self.crash, self.error = inner, failures, crash, error

    async def extract(self, request: ExtractionRequest) -> Sequence[ExtractedFact]:
        if self.failures > 0:
            self.failures -= 1
            if self.crash:
                raise KeyboardInterrupt  # the process dies mid-step
            raise self.error("injected extractor failure")
        return await self.inner.extract(request)


def changes(rig: Rig) -> dict[object, tuple[str, str]]:
    return {
        (s_id, c.change_id): (c.field, c.status.value)
        for s_id in rig.subjects
        for c in rig.subject(s_id).changes.values()
    }


@pytest.fixture
def recorded(rig: Rig) -> Rig:
    rig.subjects = [rig.register("lead-1"), rig.register("lead-2")]
    for n, subject in enumerate(rig.subjects):
        rig.record(subject, "s1", day(4, 2 + n), *LINES)
    return rig


async def test_running_the_step_twice_proposes_nothing_twice(recorded: Rig) -> None:
    await recorded.worker().run_once()
    once = changes(recorded)
    version = recorded.ledger.recorder.max_notification_id()

    await recorded.worker().run_once()

    assert changes(recorded) == once
    assert len(once) == 6  # supplier, budget, complaints for each lead
    assert recorded.ledger.recorder.max_notification_id() == version


async def test_a_restart_that_replays_the_log_from_the_start_proposes_nothing_new(
    recorded: Rig,
) -> None:
    await recorded.worker().run_once()
    once = changes(recorded)

    recorded.store = InMemorySyncStore()  # the in-memory queue is gone with its process
    report = await recorded.worker().run_once()

    assert changes(recorded) == once
    assert report.dead == 0


async def test_a_worker_killed_mid_step_leaves_the_same_result_once_another_takes_over(
    recorded: Rig,
) -> None:
    crashing = Failing(recorded.extractor, failures=1, crash=True)
    with pytest.raises(KeyboardInterrupt):
        await recorded.worker(crashing).run_once()
    assert changes(recorded) == {}
    recorded.expire_leases()

    await recorded.worker().run_once()

    fields = sorted(field for field, _ in changes(recorded).values())
    assert fields == ["budget", "budget", "complaints", "complaints", "supplier", "supplier"]
    assert all(recorded.subject(s).has_reviewed("s1") for s in recorded.subjects)


async def test_a_step_that_keeps_failing_is_a_dead_letter_and_the_session_stays(
    recorded: Rig,
) -> None:
    failing = Failing(recorded.extractor, failures=10)

    report = await recorded.worker(failing).run_once()
    while report.retried:
        report = await recorded.worker(failing).process()

    dead = await recorded.store.dead_letters()
    assert {d.kind for d in dead} == {SyncKind.PROPOSE}
    assert len(dead) == 2
    assert changes(recorded) == {}
    assert all(recorded.subject(s).sessions for s in recorded.subjects)

    await recorded.store.retry_dead()
    await recorded.worker().run_once()
    assert len(changes(recorded)) == 6


async def test_a_step_an_extractor_outage_fails_waits_for_it_and_proposes_once_it_is_back(
    recorded: Rig,
) -> None:
    away = Failing(recorded.extractor, failures=10**6, error=MemoryUnavailableError)
    worker = recorded.worker(away)
    for _ in range(3):
        report = await worker.run_once()
        assert report.dead == 0
        recorded.ticks[0] += 1.0  # past the outage's wait (ADR 0183)
    assert await recorded.store.dead_letters() == []
    assert changes(recorded) == {}
    back = recorded.worker()
    await back.run_once()
    assert len(changes(recorded)) == 6
