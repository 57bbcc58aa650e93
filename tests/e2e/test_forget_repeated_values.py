"""A reason given after a change repeats the change and the value it replaced ("switched to
Y, previously X, because ..."); forgetting X or Y leaves neither in any note the backend
keeps or recall shows, on every backend (ADR 0025, ADR 0032).

Fresh wording of our own: a workshop that buys its parts from Halvorsen Tools, then from
Brightwater Supply, and says why when the agent asks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.commands import ForgetMemory, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import MemoryFact, SearchMode, SearchQuery
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.supermemory.harness import supermemory_backend_in_process

TENANT = "acme"
OLD, NEW = "Halvorsen", "Brightwater"
FEB, APRIL = datetime(2026, 2, 3, 10, tzinfo=UTC), datetime(2026, 4, 7, 10, tzinfo=UTC)
FIRST = (
    Message(Role.AGENT, "Who supplies your parts today?", at=FEB),
    Message(Role.SUBJECT, "We buy our parts from Halvorsen Tools.", at=FEB),
)
SECOND = (
    Message(Role.SUBJECT, "We switched to Brightwater Supply last month.", at=APRIL),
    Message(Role.AGENT, "What made you switch?", at=APRIL),
    Message(Role.SUBJECT, "Mostly the missed deliveries.", at=APRIL),
)
ALSO_SAID = (Message(Role.SUBJECT, "Our budget is 30k a year.", at=APRIL),)
# What recall answers is asked here, not how fast.
POLICY = RecallPolicy(threshold=0.0, recall_budget_s=30.0, context_budget_s=30.0)


@dataclass
class Rig:
    clock: ManualClock
    ledger: Ledger
    backend: MemoryBackend
    subject_id: UUID

    async def sync(self) -> None:
        feed = LedgerEventFeed(self.ledger)
        ports = SyncPorts(InMemorySyncStore(), feed, feed, self.backend)
        worker = SyncWorker(ports, SyncOptions(lease_s=0.2, backoff_s=0.0), worker_id="w")
        while (report := await worker.run_once()).fed or report.done:
            assert report.dead == 0

    def recall(self) -> Recall:
        sources, forgets = LedgerRecallSources(self.ledger), LedgerForgets(self.ledger)
        turns = LedgerTurns(self.ledger, forgets)
        return Recall(RecallPorts(self.backend, sources, RecallPolicies(POLICY), forgets, turns))

    async def memories(self) -> list[MemoryFact]:
        ns = namespace_for(self.subject_id)
        return await self.backend.list_memories(ns, include_superseded=True, limit=500)

    async def forget(self, memory_id: str) -> None:
        self.ledger.forget_memory(
            ForgetMemory(
                TENANT, self.subject_id, memory_id, Actor(ActorKind.STAFF, "r-1"), "asked to"
            )
        )


@pytest.fixture(
    params=[
        "in_memory",
        "supermemory_fake_http",
        pytest.param("pgvector", marks=pytest.mark.integration),
    ]
)
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    clock, extractor, embedder = ManualClock(), RuleExtractor(), HashingEmbedder()
    async with AsyncExitStack() as stack:
        backend: MemoryBackend
        if request.param == "in_memory":
            backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock)
        elif request.param == "supermemory_fake_http":
            harness = supermemory_backend_in_process(extractor, embedder, clock=clock)
            backend, _ = await stack.enter_async_context(harness)
        else:
            backend = await stack.enter_async_context(
                pgvector_backend(
                    request.getfixturevalue("postgres"),
                    embedder=embedder,
                    extractor=extractor,
                    clock=clock,
                )
            )
        ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
        stack.callback(ledger.close)
        subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "ws-7")).subject_id
        for n, (at, said) in enumerate([(FEB, FIRST), (APRIL, SECOND + ALSO_SAID)]):
            clock.set(at)
            session = RecordSession(TENANT, subject_id, f"s-{n}", Channel.CHAT, at, at, said)
            ledger.record_session(session)
        rig = Rig(clock, ledger, backend, subject_id)
        await rig.sync()
        yield rig


def one(memories: list[MemoryFact], *words: str) -> MemoryFact:
    [found] = [m for m in memories if all(w in m.text for w in words)]
    return found


async def shown(rig: Rig, words: str) -> list[str]:
    """Every text the backend's searches and recall give for `words`."""
    ns = namespace_for(rig.subject_id)
    texts = []
    for mode in (SearchMode.MEMORIES, SearchMode.HYBRID):
        query = SearchQuery(words, mode=mode, threshold=0.0, limit=50)
        texts += [h.text for h in await rig.backend.search(ns, query)]
    recalled = await rig.recall().recall(rig.subject_id, words)
    return texts + [n.text for n in recalled.notes]


async def test_the_reason_names_the_value_it_replaced_before_anything_is_forgotten(
    rig: Rig,
) -> None:
    reason = one(await rig.memories(), "previously", "missed deliveries")
    assert OLD in reason.text
    assert NEW in reason.text


async def test_forgetting_the_replaced_fact_leaves_it_in_no_note(rig: Rig) -> None:
    memories = await rig.memories()
    old = one(memories, OLD, "works with")
    assert not old.is_latest

    await rig.forget(old.id)
    await rig.sync()

    assert not [m.text for m in await rig.memories() if OLD in m.text]
    assert not [t for t in await shown(rig, "Halvorsen Tools parts deliveries") if OLD in t]
    kept = await rig.memories()
    assert one(kept, NEW).is_latest  # the current supplier stays known
    assert one(kept, "budget")  # and what else was said that day


async def test_forgetting_the_change_takes_the_reason_that_restates_it(rig: Rig) -> None:
    [change] = [m for m in await rig.memories() if NEW in m.text and "previously" not in m.text]

    await rig.forget(change.id)
    await rig.sync()

    assert not [m.text for m in await rig.memories() if NEW in m.text]
    assert not [t for t in await shown(rig, "Brightwater Supply deliveries") if NEW in t]
    assert one(await rig.memories(), "budget")


@pytest.mark.parametrize(
    ("words", "query"), [(OLD, "Halvorsen Tools"), (NEW, "Brightwater Supply")]
)
async def test_recall_drops_the_repeating_note_before_the_sync_has_run(
    rig: Rig, words: str, query: str
) -> None:
    memories = await rig.memories()
    target = (
        one(memories, OLD, "works with")
        if words == OLD
        else next(m for m in memories if NEW in m.text and "previously" not in m.text)
    )
    question = f"{query} missed deliveries"
    before = await rig.recall().recall(rig.subject_id, question)
    assert [n for n in before.notes if "previously" in n.text and words in n.text]

    await rig.forget(target.id)  # the ledger knows; the backend has not been told yet

    after = await rig.recall().recall(rig.subject_id, question)
    assert not [n.text for n in after.notes if words in n.text]
