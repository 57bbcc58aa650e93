"""Erasing a subject reaches the memory backend: the sync drops the subject's namespace, as a
durable item that is retried and dead-lettered like every other (one that fails while the
backend is away waits for it), and never touches another subject's namespace."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
from support.ticks import Ticks

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.errors import MemoryUnavailableError
from factledger.application.ledger.commands import EraseSubject, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.types import SyncKind, SyncReport
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import TENANT

ADMIN = Actor(ActorKind.STAFF, "admin-1")


class FailingDrops(InMemoryMemoryBackend):
    """Refuses to drop a namespace `failures` times with `error`, then drops it."""

    failures = 0
    error: type[Exception] = MemoryUnavailableError

    async def drop_namespace(self, namespace: Namespace) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise self.error("drop_namespace failed")
        await super().drop_namespace(namespace)


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    backend: FailingDrops
    store: InMemorySyncStore
    ticks: Ticks

    async def sync(self) -> SyncReport:
        feed = LedgerEventFeed(self.ledger)
        ports = SyncPorts(self.store, feed, feed, self.backend)
        return await SyncWorker(ports, SyncOptions(backoff_s=0.0)).run_once()

    async def texts(self, ns: Namespace, words: Sequence[str]) -> list[str]:
        found = []
        for word in words:
            query = SearchQuery(word, threshold=0.0, limit=50, include_forgotten=True)
            found += [h.text for h in await self.backend.search(ns, query)]
        return found


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    backend = FailingDrops(extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock)
    ticks = Ticks()
    yield Rig(clock, ledger, backend, InMemorySyncStore(monotonic=ticks), ticks)
    ledger.close()


async def test_erasing_a_subject_drops_its_backend_namespace_and_no_other(rig: Rig) -> None:
    # Given a synced story subject and another subject with a record of its own
    story = run_story(rig.ledger, rig.clock, until="June")
    other = rig.ledger.register_subject(RegisterSubject(TENANT, "lead", "other-1")).subject_id
    assert (await rig.sync()).dead == 0
    ns, other_ns = namespace_for(story.subject_id), namespace_for(other)
    await rig.backend.put_record(other_ns, "note-1", "session_summary", '{"t": "Supplier"}')
    assert await rig.backend.list_memories(ns)

    # When the subject is erased and the sync runs
    rig.ledger.erase_subject(EraseSubject(TENANT, story.subject_id, ADMIN, "subject asked"))
    assert (await rig.sync()).dead == 0

    # Then nothing of the subject is left in the backend, and the other subject keeps its own
    assert await rig.backend.list_memories(ns, include_forgotten=True) == []
    assert await rig.texts(ns, ["Supplier", "delivery", "quarter"]) == []
    assert (await rig.backend.get_record(other_ns, "note-1")).record_id == "note-1"


async def test_a_drop_failed_by_a_fault_of_its_own_is_retried_then_dead_lettered(
    rig: Rig,
) -> None:
    story = run_story(rig.ledger, rig.clock, until="March")
    assert (await rig.sync()).dead == 0
    rig.ledger.erase_subject(EraseSubject(TENANT, story.subject_id, ADMIN, "subject asked"))
    rig.backend.failures, rig.backend.error = 100, RuntimeError

    reports = [await rig.sync() for _ in range(5)]

    dead = await rig.store.dead_letters()
    assert [(d.kind, d.targets) for d in dead] == [
        (SyncKind.ERASE, (f"namespace:{namespace_for(story.subject_id)}",))
    ]
    assert dead[0].error_type == "RuntimeError"
    assert sum(r.retried for r in reports) >= 1


async def test_an_erasure_waits_out_a_backend_outage_and_drops_the_namespace_once_it_is_back(
    rig: Rig,
) -> None:
    story = run_story(rig.ledger, rig.clock, until="March")
    assert (await rig.sync()).dead == 0
    ns = namespace_for(story.subject_id)
    rig.ledger.erase_subject(EraseSubject(TENANT, story.subject_id, ADMIN, "subject asked"))
    rig.backend.failures = 1_000  # the backend is away (`MemoryUnavailableError`)

    reports = []
    for _ in range(20):
        reports.append(await rig.sync())
        rig.ticks.now += 60.0  # past the longest wait of an outage

    assert sum(r.dead for r in reports) == 0
    assert sum(r.retried for r in reports) == 20  # one try a pass: no pass spins on it
    assert await rig.store.dead_letters() == []
    rig.backend.failures = 0  # back
    assert (await rig.sync()).done == 1
    assert await rig.texts(ns, ["Supplier", "delivery"]) == []
    assert await rig.store.pending_count() == 0


async def test_an_erasure_retried_after_a_failure_drops_the_namespace(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="March")
    assert (await rig.sync()).dead == 0
    rig.ledger.erase_subject(EraseSubject(TENANT, story.subject_id, ADMIN, "subject asked"))
    rig.backend.failures = 1

    report = await rig.sync()
    rig.ticks.now += 1.0  # past the outage's first wait
    again = await rig.sync()

    assert (report.retried, report.dead, again.done, again.dead) == (1, 0, 1, 0)
    ns = namespace_for(story.subject_id)
    assert await rig.backend.list_memories(ns, include_forgotten=True) == []
