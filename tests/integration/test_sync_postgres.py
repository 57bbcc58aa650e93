"""The sync worker on PostgreSQL: shared queue, several workers, dead letters, crash resume."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.event_store import ensure_schema, postgres_env
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.tables import PostgresTables
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import MemoryUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import (
    IngestMode,
    Metadata,
    Namespace,
    ProcessingStatus,
)
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.types import SyncItem, SyncKind
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.transcript import Message
from factledger.testing.manual_clock import ManualClock
from factledger.testing.stalling_backend import Fault, StallingBackend
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import TENANT

pytestmark = pytest.mark.integration


class CountingBackend(StallingBackend):
    """Counts every write by target id; can fail one record kind (with `failing_with`: by
    default a fault of the write's own, no outage) or crash on the n-th write."""

    def __init__(self, inner: InMemoryMemoryBackend) -> None:
        super().__init__(inner, fault=Fault.NONE)
        self.writes: Counter[str] = Counter()
        self.failing_kind: str | None = None
        self.failing_with: type[Exception] = RuntimeError
        self.crash_on_write: int | None = None

    def _count(self, target: str) -> None:
        if self.crash_on_write is not None and sum(self.writes.values()) + 1 == self.crash_on_write:
            self.crash_on_write = None
            raise KeyboardInterrupt
        self.writes[target] += 1

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
        self._count(record_id)
        await super().put_record(
            namespace, record_id, kind, body_json, metadata, search_text=search_text
        )

    async def ingest_transcript(
        self,
        namespace: Namespace,
        document_id: str,
        transcript: list[Message] | tuple[Message, ...],  # type: ignore[override]
        *,
        occurred_at: object,
        metadata: Metadata | None = None,
        mode: IngestMode = IngestMode.INSTANT,
    ) -> ProcessingStatus:
        self._count(document_id)
        return await super().ingest_transcript(
            namespace,
            document_id,
            transcript,
            occurred_at=occurred_at,  # type: ignore[arg-type]
            metadata=metadata,
            mode=mode,
        )


class ClaimCountingStore(PostgresSyncStore):
    """Counts every claim of an item by item id: an item claimed twice was processed twice,
    whatever it writes (a retirement or a rejection forgets or deletes, never puts)."""

    def __init__(self, tables: PostgresTables, *, name: str) -> None:
        super().__init__(tables, name=name)
        self.claimed: Counter[str] = Counter()

    async def claim(self, worker_id: str, *, limit: int, lease_s: float) -> list[SyncItem]:
        items = await super().claim(worker_id, limit=limit, lease_s=lease_s)
        self.claimed.update(item.item_id for item in items)
        return items


@dataclass
class PgRig:
    clock: ManualClock
    ledger: Ledger
    store: ClaimCountingStore
    inner: InMemoryMemoryBackend
    backend: CountingBackend

    def worker(self, name: str, *, lease_s: float = 30.0, poll_s: float = 0.5) -> SyncWorker:
        feed = LedgerEventFeed(self.ledger)
        options = SyncOptions(batch_size=3, lease_s=lease_s, backoff_s=0.0, poll_interval_s=poll_s)
        return SyncWorker(SyncPorts(self.store, feed, feed, self.backend), options, worker_id=name)


@pytest.fixture
async def rig(postgres: PostgresLocation) -> AsyncIterator[PgRig]:
    clock = ManualClock()
    ledger = Ledger(
        postgres_env(postgres, schema=f"ledger_{uuid.uuid4().hex[:10]}"),
        clock=clock,
        keys=InMemoryKeyStore(),
    )
    schema = f"sync_{uuid.uuid4().hex[:10]}"
    ensure_schema(postgres, schema)
    store = await ClaimCountingStore.connect(postgres.conninfo, schema=schema)
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    yield PgRig(clock, ledger, store, inner, CountingBackend(inner))
    await store.close()
    ledger.close()


async def test_concurrent_workers_process_each_item_once(rig: PgRig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    reports = await asyncio.gather(*(rig.worker(f"w{n}").run_once() for n in range(3)))
    # a late worker may find work freed by the others; drain what is left
    reports.append(await rig.worker("w-last").run_once())
    assert sum(r.dead for r in reports) == 0
    assert await rig.store.pending_count() == 0
    # Every planned item was claimed once and done once. Items are counted, not writes: a
    # retirement or a rejection is an item that puts no record.
    fed = sum(r.fed for r in reports)
    assert fed == len(rig.store.claimed) == sum(r.done for r in reports)
    assert set(rig.store.claimed.values()) == {1}
    assert {item_id.split(".")[0] for item_id in rig.store.claimed} >= {
        str(position) for position, _ in await LedgerEventFeed(rig.ledger).read(after=0, limit=100)
    }
    assert rig.backend.writes, "nothing was written"
    assert set(rig.backend.writes.values()) == {1}  # every document and record written once
    ns = namespace_for(story.subject_id)
    current = await rig.inner.list_memories(ns, include_superseded=False)
    assert [m.text for m in current if m.slot == "supplier"] == ["works with Supplier B"]


async def test_dead_letters_are_listed_and_retried(rig: PgRig) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    rig.backend.failing_kind = "change_proposed"
    worker = rig.worker("w1")
    await worker.run_once()
    for _ in range(10):  # backoff is 0 s: each pass retries what failed in the previous one
        if await rig.store.pending_count() == 0:
            break
        await worker.process()
    dead = await rig.store.dead_letters()
    assert len(dead) == len(story.changes)  # every proposal
    assert {(d.attempts, d.error_type) for d in dead} == {(3, "RuntimeError")}
    assert await rig.store.dead_letters(tenant=TENANT) == dead  # fed with the subject's tenant
    assert await rig.store.dead_letters(tenant=f"not-{TENANT}") == []
    rig.backend.failing_kind = None
    assert await rig.store.retry_dead([dead[0].item_id]) == 1
    assert (await worker.process()).done == 1
    assert await rig.store.retry_dead() == len(dead) - 1
    assert (await worker.process()).done == len(dead) - 1
    assert await rig.store.dead_letters() == []


async def test_an_outage_holds_the_items_in_the_queue_until_the_backend_is_back(
    rig: PgRig,
) -> None:
    story = run_story(rig.ledger, rig.clock, until="June")
    rig.backend.failing_kind, rig.backend.failing_with = "change_proposed", MemoryUnavailableError
    worker = rig.worker("w1", poll_s=0.05)  # an outage's item waits a poll interval at least
    await worker.run_once()
    tries = 0
    for _ in range(10):
        await asyncio.sleep(0.1)  # the server's clock: past the item's wait
        report = await worker.process()
        assert report.dead == 0
        tries += report.retried
    assert tries >= 5  # tried again and again, never given up on
    assert await rig.store.dead_letters() == []
    rig.backend.failing_kind = None  # the backend is back
    for _ in range(50):
        if await rig.store.pending_count() == 0:
            break
        await asyncio.sleep(0.1)
        await worker.process()
    assert await rig.store.pending_count() == 0
    assert await rig.store.dead_letters() == []
    proposals = [t for t in rig.backend.writes if t.startswith("proposal.")]
    assert len(proposals) == len(story.changes)  # every proposal written, once
    assert set(rig.backend.writes.values()) == {1}


async def test_a_killed_worker_resumes_without_loss_or_duplicates(rig: PgRig) -> None:
    run_story(rig.ledger, rig.clock, until="June")
    rig.backend.crash_on_write = 5
    with pytest.raises(KeyboardInterrupt):
        await rig.worker("doomed", lease_s=0.2).run_once()
    written_before = sum(rig.backend.writes.values())
    assert written_before == 4
    await asyncio.sleep(0.3)  # the doomed worker's lease lapses (server clock)
    report = await rig.worker("survivor").run_once()
    assert report.dead == 0
    assert await rig.store.pending_count() == 0
    # the crashed write is repeated once (idempotent); nothing is written twice otherwise
    assert set(rig.backend.writes.values()) == {1}
    # three sessions (transcript and summary each), the model's six proposals, four versions
    assert len(rig.backend.writes) == 16


async def test_a_queue_made_before_items_had_tenants_gains_the_column(
    postgres: PostgresLocation,
) -> None:
    schema = f"sync_{uuid.uuid4().hex[:10]}"
    ensure_schema(postgres, schema)
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.sync_items (item_id text PRIMARY KEY, position bigint NOT NULL,"
                " seq integer NOT NULL, subject_id uuid NOT NULL, kind text NOT NULL,"
                " targets text[] NOT NULL, attempts integer NOT NULL DEFAULT 0,"
                " state text NOT NULL DEFAULT 'pending',"
                " available_at timestamptz NOT NULL DEFAULT now(), leased_by text,"
                " leased_until timestamptz, error_type text)"
            ).format(sql.Identifier(schema))
        )
    store = await PostgresSyncStore.connect(postgres.conninfo, schema=schema)
    try:
        item = SyncItem("1.0", 1, uuid.uuid4(), SyncKind.PROPOSAL, ("r",), tenant="t1")
        assert await store.enqueue([item], after=0, upto=1)
        assert await store.claim("w", limit=1, lease_s=60) == [item]
    finally:
        await store.close()
