"""The whole story, end to end: sessions through short-term memory, the ledger, the sync
worker, the memory backend, and recall; on the in-memory backend and on pgvector.

Every log line of the run is captured: no transcript or profile text may appear in any.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import pytest
import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.postgres.event_store import ensure_schema, postgres_env
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import HitKind, SearchMode, SearchQuery
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.application.recall.types import Degraded, NoteKind
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.transcript import Channel
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.stalling_backend import Fault, StallingBackend
from factledger.testing.story.drivers import play_story_through_short_term_memory
from factledger.testing.story.script import JUNE, MARCH, REASON, SECRETS, TENANT, WITHHELD
from factledger.testing.story.steps import forget

# The hashing embedder is lexical: queries share words with the facts they should find.
# The story checks the excerpts too. It asks what recall answers, under budgets no busy machine
# runs out of, but the stall's turn, which gets the product's.
POLICY = RecallPolicy(threshold=0.3, excerpts=True, recall_budget_s=30.0, context_budget_s=30.0)
PRODUCT_BUDGETS = RecallPolicy(threshold=0.3, excerpts=True)


@dataclass
class World:
    clock: ManualClock
    ledger: Ledger
    backend: MemoryBackend
    buffer: SessionBuffer
    store: SyncStore

    def memory(self) -> ShortTermMemory:
        recorder = LedgerSessionRecorder(self.ledger)
        ports = SessionPorts(self.buffer, DetectorSafetyFilter(), recorder, self.clock)
        return ShortTermMemory(ports)

    def recall(self, backend: MemoryBackend | None = None, policy: RecallPolicy = POLICY) -> Recall:
        sources = LedgerRecallSources(self.ledger)
        policies, forgets = RecallPolicies(policy), LedgerForgets(self.ledger)
        turns = LedgerTurns(self.ledger, forgets)
        return Recall(RecallPorts(backend or self.backend, sources, policies, forgets, turns))

    def worker(self, name: str, backend: MemoryBackend | None = None) -> SyncWorker:
        feed = LedgerEventFeed(self.ledger)
        ports = SyncPorts(self.store, feed, feed, backend or self.backend)
        return SyncWorker(ports, SyncOptions(lease_s=0.2, backoff_s=0.0), worker_id=name)


async def record_texts(backend: MemoryBackend, subject_id: uuid.UUID) -> list[str]:
    """The texts of every chunk (record) hit of chunk and hybrid searches about the supplier."""
    texts = []
    for mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
        query = SearchQuery("Supplier A Supplier B supplier", mode=mode, threshold=0.0, limit=50)
        hits = await backend.search(namespace_for(subject_id), query)
        texts += [h.text for h in hits if h.kind is HitKind.CHUNK]
    return texts


class CrashingBackend(StallingBackend):
    """Passes writes through until the n-th `put_record`, which kills the worker."""

    def __init__(self, inner: MemoryBackend, *, crash_on: int) -> None:
        super().__init__(inner, fault=Fault.NONE)
        self.crash_on, self.records = crash_on, 0

    async def put_record(self, *args: object, **kwargs: object) -> None:  # type: ignore[override]
        self.records += 1
        if self.records == self.crash_on:
            raise KeyboardInterrupt
        await self.inner.put_record(*args, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(params=["in_memory", pytest.param("pgvector", marks=pytest.mark.integration)])
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    clock = ManualClock()
    async with AsyncExitStack() as stack:
        if request.param == "in_memory":
            ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
            backend: MemoryBackend = InMemoryMemoryBackend(
                extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
            )
            buffer: SessionBuffer = InMemorySessionBuffer()
            store: SyncStore = InMemorySyncStore()
        else:
            location: PostgresLocation = request.getfixturevalue("postgres")
            suffix = uuid.uuid4().hex[:10]
            ledger = Ledger(
                postgres_env(location, schema=f"ledger_{suffix}"),
                clock=clock,
                keys=InMemoryKeyStore(),
            )
            backend = await stack.enter_async_context(
                pgvector_backend(
                    location, embedder=HashingEmbedder(), extractor=RuleExtractor(), clock=clock
                )
            )
            for schema in (f"stm_{suffix}", f"sync_{suffix}"):
                ensure_schema(location, schema)
            pg_buffer = await PostgresSessionBuffer.connect(
                location.conninfo, schema=f"stm_{suffix}"
            )
            stack.push_async_callback(pg_buffer.close)
            pg_store = await PostgresSyncStore.connect(location.conninfo, schema=f"sync_{suffix}")
            stack.push_async_callback(pg_store.close)
            buffer, store = pg_buffer, pg_store
        stack.callback(ledger.close)
        yield World(clock, ledger, backend, buffer, store)


async def test_the_story_is_recalled_as_dated_notes_and_logs_hold_no_content(world: World) -> None:
    with structlog.testing.capture_logs() as logs:
        # Given the story, its sessions through short-term memory, synced by a worker that
        # is killed mid-batch and replaced
        story = await play_story_through_short_term_memory(
            world.ledger, world.clock, world.memory(), until="June"
        )
        crashing = CrashingBackend(world.backend, crash_on=3)
        with pytest.raises(KeyboardInterrupt):
            await world.worker("doomed", crashing).run_once()
        import asyncio

        await asyncio.sleep(0.3)  # the doomed worker's lease lapses
        report = await world.worker("survivor").run_once()
        assert report.dead == 0
        assert await world.store.pending_count() == 0

        # When the agent recalls the supplier and opens a session
        recall = world.recall()
        turn = await recall.recall(story.subject_id, "works with Supplier")
        context = await recall.session_context(story.subject_id, topic="works with Supplier")

        # Then the current supplier comes back as a dated note, with its history, never quoted
        assert turn.degraded is None
        supplier_notes = [n for n in turn.notes if "Supplier" in n.text]
        assert [n.text for n in supplier_notes] == ["works with Supplier B, previously Supplier A"]
        assert (supplier_notes[0].on, supplier_notes[0].channel) == (MARCH.date(), Channel.VOICE)
        assert all('"' not in n.text for n in turn.notes)
        assert "2026-03-03, voice call: works with Supplier B, previously Supplier A" in (
            render_recall(turn)
        )
        # the withheld message never reached the ledger, the backend or recall
        assert WITHHELD not in render_context(context)
        assert all(WITHHELD not in e.text for e in turn.excerpts)
        subject = world.ledger.subject(TENANT, story.subject_id)
        assert all(
            WITHHELD not in text for s in subject.sessions.values() for _, text in s.messages
        )
        # the profile holds confirmed facts only; the rejected inference appears nowhere
        profile_fields = {n.origin.ref for n in context.profile}
        assert profile_fields == {"supplier", "purchase_intent", "complaints"}
        assert "insights" not in render_context(context)
        assert "important factor" not in render_context(context)
        assert all(n.origin.kind is NoteKind.PROFILE for n in context.profile)
        # nobody decided the budget: the agent is to ask before relying on it
        assert [n.origin.ref for n in context.to_confirm] != []
        assert all("budget" in n.text for n in context.to_confirm)
        assert context.recent_sessions[0].on == JUNE.date()

        # and our verbatim records (profile versions, proposals) carry it, searchable as chunks
        assert "Supplier B" in " ".join(await record_texts(world.backend, story.subject_id))

        # When the supplier is forgotten and the worker runs again
        forget(world.ledger, world.clock, story, "supplier")
        await world.worker("survivor").run_once()

        # Then no chunk or hybrid search finds it: the records that held it are deleted (Supplier
        # A is still named by the reason, another field: "delivery delays at Supplier A")
        texts = await record_texts(world.backend, story.subject_id)
        assert not [t for t in texts if "Supplier B" in t]
        assert all("complaints" in t or "budget" in t for t in texts if "Supplier" in t)
        ns = namespace_for(story.subject_id)
        for mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
            query = SearchQuery("works with Supplier B", mode=mode, threshold=0.0, limit=50)
            assert all("Supplier B" not in h.text for h in await world.backend.search(ns, query))

        # Then recall no longer knows the supplier
        after = await recall.recall(story.subject_id, "works with Supplier")
        assert not [n for n in after.notes if "Supplier B" in n.text]
        context_after = await recall.session_context(story.subject_id)
        assert "supplier" not in {n.origin.ref for n in context_after.profile}

        # And a 38 s stall costs the agent at most its budget
        stalled = world.recall(StallingBackend(world.backend, fault=Fault.STALL), PRODUCT_BUDGETS)
        slow = await stalled.recall(story.subject_id, "works with Supplier")
        assert slow.degraded is Degraded.TIMEOUT

    assert logs, "the story logged nothing"
    captured = repr(logs)
    for secret in SECRETS:
        assert secret not in captured, "content leaked into the logs"


async def test_a_forgotten_reason_is_no_longer_recalled(world: World) -> None:
    # Given the story up to June synced: the reason the lead gave in the June chat (message 1,
    # a complaint the model proposed) is confirmed as a field
    story = await play_story_through_short_term_memory(
        world.ledger, world.clock, world.memory(), until="June"
    )
    await world.worker("w").run_once()
    recall, query = world.recall(), "why they left Supplier A: deliveries kept arriving late"
    before = await recall.recall(story.subject_id, query)
    assert [n for n in before.notes if "deliveries" in n.text and n.origin.kind is NoteKind.MEMORY]

    # When the lead asks to forget the reason (the story's July) and the worker runs
    forget(world.ledger, world.clock, story, REASON.field)
    report = await world.worker("w").run_once()

    # Then no note or excerpt of recall carries the reason, while the supplier stays known
    assert report.dead == 0
    after = await recall.recall(story.subject_id, query)
    assert not [n for n in after.notes if "deliveries" in n.text]
    assert not [e for e in after.excerpts if "deliveries" in e.text]
    supplier = await recall.recall(story.subject_id, "works with Supplier")
    assert [n.text for n in supplier.notes if "Supplier" in n.text] == [
        "works with Supplier B, previously Supplier A"
    ]
