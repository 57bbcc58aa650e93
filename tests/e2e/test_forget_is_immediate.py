"""Forgetting is immediate: once `forget` returns, recall and context no longer serve the fact,
on every backend, while the sync worker is stopped (the backend has not heard of it yet)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.ledger.commands import ForgetMemory
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import SearchQuery
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.application.recall.types import NoteKind
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.story.drivers import play_story_through_short_term_memory
from factledger.testing.story.script import LEAD, REASON, TENANT
from factledger.testing.story.steps import StoryIds, forget
from factledger.testing.supermemory.harness import supermemory_backend_in_process

# The hashing embedder is lexical; what recall answers is asked here, not how fast.
POLICY = RecallPolicy(threshold=0.3, recall_budget_s=30.0, context_budget_s=30.0)
SUPPLIER = "works with Supplier"
REASON_QUERY = "why they left Supplier A: deliveries kept arriving late"


@dataclass
class World:
    clock: ManualClock
    ledger: Ledger
    backend: MemoryBackend
    story: StoryIds

    def recall(self, *, with_forgets: bool = True) -> Recall:
        sources = LedgerRecallSources(self.ledger)
        forgets = LedgerForgets(self.ledger) if with_forgets else None
        turns = None if forgets is None else LedgerTurns(self.ledger, forgets)
        return Recall(RecallPorts(self.backend, sources, RecallPolicies(POLICY), forgets, turns))


@pytest.fixture(
    params=[
        "in_memory",
        "supermemory_fake",
        pytest.param("pgvector", marks=pytest.mark.integration),
        # Searches read the process's mirror of the namespace (ADR 0056).
        pytest.param("pgvector_mirrored", marks=pytest.mark.integration),
    ]
)
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    extractor, embedder = RuleExtractor(), HashingEmbedder()
    async with AsyncExitStack() as stack:
        stack.callback(ledger.close)
        backend: MemoryBackend
        if request.param == "in_memory":
            backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock)
        elif request.param == "supermemory_fake":
            harness = supermemory_backend_in_process(extractor, embedder, clock=clock)
            backend, _server = await stack.enter_async_context(harness)
        else:
            backend = await stack.enter_async_context(
                pgvector_backend(
                    request.getfixturevalue("postgres"),
                    embedder=embedder,
                    extractor=extractor,
                    clock=clock,
                    mirror=MirrorSettings(inline=True, earn_after=1)
                    if request.param == "pgvector_mirrored"
                    else None,
                )
            )
        # Given the story up to June, synced to the backend; then the sync stops
        memory = ShortTermMemory(
            SessionPorts(
                InMemorySessionBuffer(),
                DetectorSafetyFilter(),
                LedgerSessionRecorder(ledger),
                clock,
            )
        )
        story = await play_story_through_short_term_memory(ledger, clock, memory, until="June")
        feed = LedgerEventFeed(ledger)
        report = await SyncWorker(SyncPorts(InMemorySyncStore(), feed, feed, backend)).run_once()
        assert report.dead == 0
        yield World(clock, ledger, backend, story)


def texts(notes: tuple[object, ...]) -> str:
    return " | ".join(getattr(n, "text", "") for n in notes)


async def test_a_forgotten_field_leaves_recall_and_context_before_the_sync_runs(
    world: World,
) -> None:
    subject = world.story.subject_id
    recall = world.recall()
    before = await recall.recall(subject, REASON_QUERY)
    assert "deliveries" in texts(before.notes)

    # When the lead asks to forget the reason; the sync worker does not run
    forget(world.ledger, world.clock, world.story, REASON.field)

    # Then the backend itself still serves it (the mask is what hides it)...
    stale = await world.recall(with_forgets=False).recall(subject, REASON_QUERY)
    assert "deliveries" in texts(stale.notes)
    # ...but recall and context no longer do, while the supplier stays known
    after = await recall.recall(subject, REASON_QUERY)
    context = await recall.session_context(subject, topic=REASON_QUERY)
    assert "deliveries" not in texts(after.notes)
    assert "deliveries" not in texts(context.memories)
    assert after.degraded is None
    supplier = await recall.recall(subject, SUPPLIER)
    assert "Supplier B" in texts(supplier.notes)


async def test_a_forgotten_slot_and_its_history_leave_recall_at_once(world: World) -> None:
    subject = world.story.subject_id
    recall = world.recall()
    assert "Supplier B" in texts((await recall.recall(subject, SUPPLIER)).notes)

    forget(world.ledger, world.clock, world.story, "supplier")

    stale = await world.recall(with_forgets=False).recall(subject, SUPPLIER)
    assert "Supplier B" in texts(stale.notes)
    after = await recall.recall(subject, SUPPLIER)
    context = await recall.session_context(subject, topic=SUPPLIER)
    for notes in (after.notes, context.memories):
        assert "Supplier B" not in texts(notes)
        assert "previously Supplier A" not in texts(notes)


async def test_a_memory_forgotten_by_id_leaves_recall_at_once(world: World) -> None:
    subject = world.story.subject_id
    recall = world.recall()
    before = await recall.recall(subject, SUPPLIER)
    (note,) = [n for n in before.notes if "Supplier B" in n.text]
    assert note.origin.kind is NoteKind.MEMORY

    command = ForgetMemory(TENANT, subject, note.origin.ref, LEAD, "the lead asked")
    world.ledger.forget_memory(command)

    query = SearchQuery(SUPPLIER, threshold=0.3, limit=10)
    backend_ids = [h.id for h in await world.backend.search(namespace_for(subject), query)]
    assert note.origin.ref in backend_ids  # the sync has not told the backend
    after = await recall.recall(subject, SUPPLIER)
    assert note.origin.ref not in [n.origin.ref for n in after.notes]
