"""The sync worker, in process: ledger (POPO) -> in-memory backend, with crashes and failures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from support.key_stores import PinnedSubjectIdKeys
from support.ticks import Ticks

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryTimeoutError,
    MemoryUnavailableError,
    StorageFullError,
)
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Metadata, Namespace
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.ports import SyncStoreUnavailableError
from factledger.application.sync.types import SyncItem, SyncKind
from factledger.application.sync.worker import (
    OUTAGE_ATTEMPTS,
    SyncOptions,
    SyncPorts,
    SyncWorker,
)
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.stalling_backend import Fault, StallingBackend
from factledger.testing.story.drivers import run_story
from factledger.testing.story.steps import StoryIds, forget


class FlakyBackend(StallingBackend):
    """Fails `put_record` for the chosen record kind with `failing_with` (by default a fault of
    the write's own, no outage); or raises a BaseException (a crash) on the n-th write of any
    kind."""

    def __init__(self, inner: InMemoryMemoryBackend) -> None:
        super().__init__(inner, fault=Fault.NONE)
        self.failing_kind: str | None = None
        self.failing_with: type[Exception] = RuntimeError
        self.crash_on_write: int | None = None
        self.crash_after_write = False  # die after the backend applied the write
        self.writes = 0

    def _write(self) -> None:
        self.writes += 1
        if self.crash_on_write is not None and self.writes == self.crash_on_write:
            self.crash_on_write = None
            raise KeyboardInterrupt  # the worker dies mid-batch

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None:
        if kind == self.failing_kind:
            raise self.failing_with("injected failure")
        if self.crash_after_write:
            await super().put_record(
                namespace, record_id, kind, body_json, metadata, search_text=search_text
            )
            self._write()
            return
        self._write()
        await super().put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )

    async def ingest_transcript(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        self._write()
        return await super().ingest_transcript(*args, **kwargs)  # type: ignore[arg-type]


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    inner: InMemoryMemoryBackend
    backend: FlakyBackend
    store: InMemorySyncStore
    ticks: Ticks

    def worker(self, name: str = "w1") -> SyncWorker:
        feed = LedgerEventFeed(self.ledger)
        ports = SyncPorts(self.store, feed, feed, self.backend)
        return SyncWorker(ports, SyncOptions(backoff_s=1.0, lease_s=30.0), worker_id=name)


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock, keys=PinnedSubjectIdKeys(InMemoryKeyStore()))
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    ticks = Ticks()
    yield Rig(clock, ledger, inner, FlakyBackend(inner), InMemorySyncStore(monotonic=ticks), ticks)
    ledger.close()


async def snapshot(backend: InMemoryMemoryBackend, story: StoryIds) -> dict[str, object]:
    ns = namespace_for(story.subject_id)
    memories = await backend.list_memories(ns, include_superseded=True, include_forgotten=True)
    records = {}
    for record_id in [f"profile.v{n}" for n in range(1, 7)]:
        try:
            records[record_id] = (await backend.get_record(ns, record_id)).body_json
        except Exception:  # noqa: S112 - absent versions are simply not in the snapshot
            continue
    return {
        "memories": sorted((m.id, m.text, m.is_latest, m.is_forgotten) for m in memories),
        "records": records,
    }


async def synced_without_faults(until: str) -> dict[str, object]:
    """The backend's snapshot of the story synced with nothing failing: the reference."""
    clock = ManualClock()
    with Ledger(popo_env(), clock=clock, keys=PinnedSubjectIdKeys(InMemoryKeyStore())) as ledger:
        backend = InMemoryMemoryBackend(
            extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
        )
        story = run_story(ledger, clock, until=until)
        feed = LedgerEventFeed(ledger)
        await SyncWorker(SyncPorts(InMemorySyncStore(), feed, feed, backend)).run_once()
        return await snapshot(backend, story)


async def test_the_story_reaches_the_backend_once(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    report = await rig.worker().run_once()
    assert report.dead == 0
    assert report.done == report.fed > 0
    ns = namespace_for(story.subject_id)
    current = await rig.inner.list_memories(ns, include_superseded=False)
    supplier = [m for m in current if m.slot == "supplier"]
    assert [m.text for m in supplier] == ["works with Supplier B"]
    profile = json.loads((await rig.inner.get_record(ns, "profile.v3")).body_json)
    assert profile["fields"]["supplier"]["text"] == "Supplier B"
    assert profile["fields"]["purchase_intent"]["condition"] == "if the pricing works"
    again = await rig.worker("w2").run_once()
    assert (again.fed, again.done) == (0, 0)


async def test_forgetting_a_field_forgets_its_memories(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.worker().run_once()
    forget(rig.ledger, rig.clock, story, "supplier")
    report = await rig.worker().run_once()
    assert report.dead == 0
    ns = namespace_for(story.subject_id)
    remaining = await rig.inner.list_memories(ns, include_superseded=True)
    assert [m for m in remaining if m.slot == "supplier"] == []
    profile = json.loads((await rig.inner.get_record(ns, "profile.v5")).body_json)
    assert "supplier" not in profile["fields"]


async def test_failing_items_are_retried_then_dead_lettered_while_others_proceed(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    rig.backend.failing_kind = "change_proposed"
    worker = rig.worker()
    first = await worker.run_once()
    assert first.retried == 1  # the first proposal failed once; its subject waits for it
    for _ in range(2):
        rig.ticks.now += 10  # past the backoff
        await worker.process()
    dead = await rig.store.dead_letters()
    assert [(d.kind, d.attempts, d.error_type) for d in dead] == [
        (SyncKind.PROPOSAL, 3, "RuntimeError")
    ]
    assert dead[0].targets[0].startswith("proposal.")
    # the worker moved on: later items of the same subject were processed
    for _ in range(20):
        if await rig.store.pending_count() == 0:
            break
        rig.ticks.now += 10
        await worker.process()
    proposals = len(story.changes)
    assert len(await rig.store.dead_letters()) == proposals  # every proposal record
    ns = namespace_for(story.subject_id)
    assert (await rig.inner.get_record(ns, "profile.v3")).kind == "profile_version"
    # fixed and retried from the dead letters
    rig.backend.failing_kind = None
    assert await rig.store.retry_dead() == proposals
    report = await worker.process()
    assert (report.done, report.dead) == (proposals, 0)
    assert await rig.store.dead_letters() == []
    assert await rig.store.pending_count() == 0


@pytest.mark.parametrize(
    "outage",
    [MemoryUnavailableError, MemoryTimeoutError, StorageFullError],
    ids=["backend-away", "backend-too-slow", "disk-full"],
)
async def test_an_item_an_outage_fails_waits_for_it_and_goes_through_once_it_is_back(
    rig: Rig, outage: type[Exception]
) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    rig.backend.failing_kind, rig.backend.failing_with = "change_proposed", outage
    worker = rig.worker()  # backoff 1 s; an outage's waits double up to 60 s
    assert (await worker.run_once()).retried == 1
    waits, waited = [], 0
    while len(waits) < 9:
        rig.ticks.now += 1
        waited += 1
        report = await worker.process()
        assert report.dead == 0
        if report.retried:
            waits.append(waited)
            waited = 0
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert await rig.store.dead_letters() == []
    # The backend is back: the item, then the rest of its subject's, go through
    rig.backend.failing_kind = None
    for _ in range(5):
        rig.ticks.now += 60
        await worker.process()
    assert await rig.store.pending_count() == 0
    assert await rig.store.dead_letters() == []
    assert await snapshot(rig.inner, story) == await synced_without_faults(until="June")


async def test_an_item_an_outage_fails_for_about_an_hour_becomes_a_dead_letter(rig: Rig) -> None:
    # A transcript too long to ingest in time fails alone, and holds its subject's later items
    run_story(rig.ledger, rig.clock, until="June")
    rig.backend.failing_kind, rig.backend.failing_with = "change_proposed", MemoryTimeoutError
    worker = rig.worker()
    await worker.run_once()
    waited = 0
    while not await rig.store.dead_letters():
        rig.ticks.now += 1
        waited += 1
        await worker.process()
        assert waited < 2 * 3600, "never given up on"
    (dead,) = await rig.store.dead_letters()
    assert (dead.attempts, dead.error_type) == (OUTAGE_ATTEMPTS, "MemoryTimeoutError")
    assert 3000 < waited < 3600  # 1 + 2 + ... + 32 s, then 60 s a try: 58 minutes


@pytest.mark.parametrize(
    ("crash_on_write", "after"), [(1, False), (4, False), (9, False), (2, True), (8, True)]
)
async def test_a_worker_killed_mid_batch_resumes_without_loss_or_duplicates(
    rig: Rig, crash_on_write: int, after: bool
) -> None:
    expected = await synced_without_faults(until="June")
    story = run_story(rig.ledger, rig.clock, until="June")
    rig.backend.crash_on_write = crash_on_write
    rig.backend.crash_after_write = after
    with pytest.raises(KeyboardInterrupt):
        await rig.worker("doomed").run_once()
    # The doomed worker's lease lapses; a new worker picks everything up.
    rig.ticks.now += 60
    report = await rig.worker("survivor").run_once()
    assert report.dead == 0
    assert await rig.store.pending_count() == 0
    assert await snapshot(rig.inner, story) == expected


async def test_a_replay_after_forgetting_leaves_existing_records_alone(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    await rig.worker().run_once()
    forget(rig.ledger, rig.clock, story, "supplier")
    await rig.worker().run_once()
    ns = namespace_for(story.subject_id)
    before = await snapshot(rig.inner, story)
    # Given a fresh queue replaying the whole log into the same backend (erased payloads now
    # render other record bodies than the ones stored)
    rig.store = InMemorySyncStore(monotonic=rig.ticks)
    report = await rig.worker("replayer").run_once()
    # Then nothing is dead-lettered and nothing comes back
    assert report.dead == 0
    assert await snapshot(rig.inner, story) == before
    remaining = await rig.inner.list_memories(ns, include_superseded=True)
    assert [m for m in remaining if m.slot == "supplier"] == []


async def test_run_forever_survives_a_failing_pass_and_stops_on_request(rig: Rig) -> None:
    class FlakyFeed(LedgerEventFeed):
        failures = 1

        async def read(self, *, after: int, limit: int, upto: int | None = None):  # type: ignore[no-untyped-def]
            if self.failures:
                self.failures -= 1
                raise ConnectionError("ledger unreachable")
            return await super().read(after=after, limit=limit, upto=upto)

    story = run_story(rig.ledger, rig.clock, until="June")
    feed = FlakyFeed(rig.ledger)
    worker = SyncWorker(
        SyncPorts(rig.store, feed, feed, rig.backend), SyncOptions(poll_interval_s=0.01)
    )
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run_forever(stop))
    for _ in range(500):
        ns = namespace_for(story.subject_id)
        if await rig.store.position() > 0 and await rig.store.pending_count() == 0:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, timeout=5)
    assert feed.failures == 0
    assert await rig.store.pending_count() == 0
    assert (await rig.inner.get_record(ns, "profile.v3")).kind == "profile_version"


async def test_a_pass_cut_short_by_the_store_gives_its_items_back_at_once(rig: Rig) -> None:
    """The database goes away mid-batch: the items the pass held stay leased to the worker.
    Its next pass gives them back, so their subjects do not wait out the lease."""

    class OutageOnComplete(InMemorySyncStore):
        outages = 1

        async def complete(self, item_id: str) -> None:
            if self.outages:
                self.outages -= 1
                raise SyncStoreUnavailableError("database away")
            await super().complete(item_id)

    rig.store = OutageOnComplete(monotonic=rig.ticks)
    story = run_story(rig.ledger, rig.clock, until="June")
    worker = rig.worker()
    with pytest.raises(SyncStoreUnavailableError):
        await worker.run_once()
    assert await rig.store.pending_count() > 0
    # The database is back; no time passes, so no lease has lapsed.
    report = await worker.run_once()
    assert report.dead == 0
    assert await rig.store.pending_count() == 0
    assert await snapshot(rig.inner, story)


class RefusingBackend(FlakyBackend):
    """Refuses the proposal records as malformed input, as the memory port's rules do."""

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None:
        if kind == "change_proposed":
            raise InvalidMemoryInputError("body_json", "refused")
        await super().put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )


async def test_an_input_the_backend_refuses_is_dead_lettered_without_retries(rig: Rig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    feed = LedgerEventFeed(rig.ledger)
    worker = SyncWorker(SyncPorts(rig.store, feed, feed, RefusingBackend(rig.inner)))

    report = await worker.run_once()

    dead = await rig.store.dead_letters()
    assert report.retried == 0
    assert len(dead) == report.dead == len(story.changes)
    assert {(d.kind, d.attempts, d.error_type) for d in dead} == {
        (SyncKind.PROPOSAL, 1, "InvalidMemoryInputError")
    }
    assert await rig.store.pending_count() == 0


def record_sessions(ledger: Ledger, subjects: int) -> list[Namespace]:
    """One session of two facts on each of `subjects` subjects."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    namespaces = []
    for n in range(subjects):
        subject_id = ledger.register_subject(RegisterSubject("acme", "lead", f"s-{n}")).subject_id
        said = (
            Message(role=Role.SUBJECT, text=f"We now buy our flour from Zorblax{n}.", at=at),
            Message(role=Role.SUBJECT, text="We moved our office to Lyon.", at=at),
        )
        ledger.record_session(
            RecordSession("acme", subject_id, f"s-{n}", Channel.CHAT, at, at, said)
        )
        namespaces.append(namespace_for(subject_id))
    return namespaces


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_items_of_different_subjects_side_by_side_reach_the_backend_once(
    rig: Rig, concurrency: int
) -> None:
    namespaces = record_sessions(rig.ledger, 6)
    feed = LedgerEventFeed(rig.ledger)
    ports = SyncPorts(rig.store, feed, feed, rig.backend)
    worker = SyncWorker(ports, SyncOptions(concurrency=concurrency))
    report = await worker.run_once()
    assert report.dead == report.retried == 0
    assert report.done == report.fed > 0
    for ns in namespaces:
        texts = sorted(m.text for m in await rig.inner.list_memories(ns))
        assert len(texts) == 2, texts
    again = await worker.run_once()
    assert (again.fed, again.done) == (0, 0)


async def test_items_side_by_side_cut_short_by_the_store_are_given_back(rig: Rig) -> None:
    # A claim's items are completed together (ADR 0094): one outage cuts the whole claim short.
    class OutageOnComplete(InMemorySyncStore):
        outages = 1

        async def complete(self, item_id: str) -> None:
            if self.outages:
                self.outages -= 1
                raise SyncStoreUnavailableError("database away")
            await super().complete(item_id)

    rig.store = OutageOnComplete(monotonic=rig.ticks)
    namespaces = record_sessions(rig.ledger, 6)
    feed = LedgerEventFeed(rig.ledger)
    worker = SyncWorker(SyncPorts(rig.store, feed, feed, rig.backend), SyncOptions(concurrency=4))
    with pytest.raises(SyncStoreUnavailableError):
        await worker.run_once()
    report = await worker.run_once()
    assert report.dead == 0
    assert await rig.store.pending_count() == 0
    for ns in namespaces:
        assert len(await rig.inner.list_memories(ns)) == 2


async def test_a_claims_items_are_completed_in_one_call(rig: Rig) -> None:
    class CountingStore(InMemorySyncStore):
        calls: list[int]

        async def complete_many(self, item_ids: Sequence[str]) -> None:
            self.calls.append(len(item_ids))
            await super().complete_many(item_ids)

    rig.store = store = CountingStore(monotonic=rig.ticks)
    store.calls = []
    record_sessions(rig.ledger, 6)
    feed = LedgerEventFeed(rig.ledger)
    worker = SyncWorker(SyncPorts(store, feed, feed, rig.backend), SyncOptions(concurrency=4))

    report = await worker.run_once()

    assert report.done == sum(store.calls) > 0
    assert len(store.calls) < report.done  # fewer calls than items
    assert await store.pending_count() == 0


async def test_two_workers_side_by_side_share_the_claimable_items_and_apply_each_once(
    rig: Rig,
) -> None:
    # A worker claims at most 2 x concurrency items (ADR 0103), not `batch_size`: a worker
    # process beside it finds items to claim instead of waiting for the first one's claim.
    class RecordingStore(InMemorySyncStore):
        limits: list[int]

        async def claim(self, worker_id: str, *, limit: int, lease_s: float) -> list[SyncItem]:
            self.limits.append(limit)
            return await super().claim(worker_id, limit=limit, lease_s=lease_s)

    rig.store = store = RecordingStore(monotonic=rig.ticks)
    store.limits = []
    namespaces = record_sessions(rig.ledger, 12)
    feed = LedgerEventFeed(rig.ledger)
    ports = SyncPorts(store, feed, feed, rig.backend)
    first, second = (SyncWorker(ports, SyncOptions(concurrency=4)) for _ in range(2))
    assert await first.feed() == 12

    reports = await asyncio.gather(first.process(), second.process())

    assert [r.done for r in reports] in ([8, 4], [4, 8]), reports
    assert max(store.limits) == 8
    assert await store.pending_count() == 0
    for ns in namespaces:
        assert len(await rig.inner.list_memories(ns)) == 2
