"""Forgetting a field forgets the backend memories drawn from its evidence, not only those
of its slot: ledger (POPO) -> sync worker -> in-memory backend with the rule extractor."""

from __future__ import annotations

import dataclasses
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
from factledger.application.ledger.commands import (
    ApproveChange,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.forget_selection import is_forgotten_with
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Capability, MemoryFact, Namespace
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock
from factledger.testing.supermemory.harness import supermemory_backend_in_process

JUNE = datetime(2026, 6, 18, 11, 0, tzinfo=UTC)
SAID = (
    (Role.AGENT, "Why did you leave Supplier A, if I may ask?"),
    (Role.SUBJECT, "Their delivery delays were hurting us."),
    (Role.AGENT, "Who do you work with now?"),
    (Role.SUBJECT, "We now work with Supplier B."),
)
LEAD = Actor(ActorKind.SUBJECT, "lead-7")


class NoProvenanceBackend(InMemoryMemoryBackend):
    """An honest backend that does not declare fact provenance: no source indexes."""

    capabilities = frozenset({Capability.FACT_SLOTS, Capability.FACT_CONDITIONS})

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        found = await super().list_memories(
            namespace,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )
        return [dataclasses.replace(m, source_indexes=()) for m in found]


@dataclass
class Rig:
    ledger: Ledger
    backend: MemoryBackend
    subject_id: UUID
    store: InMemorySyncStore
    # A backend with slots keeps what is about another current field; Supermemory has none
    # (v5 has no slot), so every memory of the evidencing session goes (ADR 0003, second addendum).
    keeps_other_fields: bool

    def worker(self, *, replay: bool = False) -> SyncWorker:
        """A worker on the rig's queue; or, to replay every event, on a new empty queue."""
        feed = LedgerEventFeed(self.ledger)
        store = InMemorySyncStore() if replay else self.store
        ports = SyncPorts(store, feed, feed, self.backend)
        return SyncWorker(ports, SyncOptions(backoff_s=0.0))

    async def memories(self, *, forgotten: bool = False) -> dict[str, MemoryFact]:
        ns = namespace_for(self.subject_id)
        found = await self.backend.list_memories(ns, include_forgotten=True)
        return {m.text: m for m in found if m.is_forgotten == forgotten}


def _propose_and_approve(rig: Rig, field: str, value: str, said: Evidence) -> None:
    cmd = ProposeChange(
        "acme",
        rig.subject_id,
        field,
        Operation.SET,
        TextValue(value),
        Origin.STATED,
        Actor(ActorKind.MODEL, "m"),
        rig.ledger.subject("acme", rig.subject_id).profile_version,
        evidence=said,
    )
    rig.ledger.propose_change(cmd)
    rig.ledger.approve_change(ApproveChange("acme", rig.subject_id, cmd.change_id, "rev"))


@pytest.fixture(params=["provenance", "no_provenance", "supermemory_fake_http"])
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    """A lead who gave a reason (message 1) and a supplier (message 3) in one chat."""
    clock = ManualClock()
    clock.set(JUNE)
    async with AsyncExitStack() as stack:
        backend: MemoryBackend
        if request.param == "supermemory_fake_http":
            harness = supermemory_backend_in_process(
                RuleExtractor(), HashingEmbedder(), clock=clock
            )
            backend, _ = await stack.enter_async_context(harness)
        else:
            kind = InMemoryMemoryBackend if request.param == "provenance" else NoProvenanceBackend
            backend = kind(extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock)
        ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
        stack.callback(ledger.close)
        yield _story(ledger, backend, keeps_other_fields=request.param != "supermemory_fake_http")


def _story(ledger: Ledger, backend: MemoryBackend, *, keeps_other_fields: bool) -> Rig:
    sid = ledger.register_subject(RegisterSubject("acme", "lead", "lead-7")).subject_id
    transcript = tuple(Message(role, text, JUNE) for role, text in SAID)
    ledger.record_session(
        RecordSession("acme", sid, "chat-6", Channel.CHAT, JUNE, JUNE, transcript)
    )
    rig = Rig(ledger, backend, sid, InMemorySyncStore(), keeps_other_fields)
    _propose_and_approve(rig, "switch_reason", "delivery delays", Evidence("chat-6", 1, "delays"))
    _propose_and_approve(rig, "supplier", "Supplier B", Evidence("chat-6", 3, "Supplier B"))
    return rig


async def test_a_forgotten_reason_takes_the_memories_of_its_words_and_nothing_else(
    rig: Rig,
) -> None:
    # Given the chat synced: the reason's memory has no slot, the supplier's has one (where
    # the backend has slots at all)
    await rig.worker().run_once()
    before = await rig.memories()
    assert before["Their delivery delays were hurting them"].slot is None
    assert "works with Supplier B" in before

    # When the reason is forgotten in the ledger and the sync runs
    rig.ledger.forget_field(ForgetField("acme", rig.subject_id, "switch_reason", LEAD, "asked"))
    report = await rig.worker().run_once()

    # Then the memories drawn from the reason's words are forgotten (the insight derived from
    # it too), and the supplier, a current field said in the same chat, stays where the
    # backend's slots say what a memory is about
    assert report.dead == 0
    after = await rig.memories()
    assert "Their delivery delays were hurting them" not in after
    assert not [text for text in after if "delivery" in text]
    assert list(after) == (["works with Supplier B"] if rig.keeps_other_fields else [])
    assert "Their delivery delays were hurting them" in await rig.memories(forgotten=True)


async def test_forgetting_again_from_a_fresh_position_changes_nothing(rig: Rig) -> None:
    # Given the reason forgotten and synced
    await rig.worker().run_once()
    rig.ledger.forget_field(ForgetField("acme", rig.subject_id, "switch_reason", LEAD, "asked"))
    await rig.worker().run_once()
    forgotten = await rig.memories(forgotten=True)

    # When every item is applied again by a worker with an empty queue (a replay)
    report = await rig.worker(replay=True).run_once()

    # Then the replay succeeds and forgets nothing more
    assert report.dead == 0
    assert report.done == report.fed > 0
    assert await rig.memories(forgotten=True) == forgotten
    assert list(await rig.memories()) == (
        ["works with Supplier B"] if rig.keeps_other_fields else []
    )


def _fact(slot: str | None, document: str | None, indexes: tuple[int, ...]) -> MemoryFact:
    return MemoryFact(
        id="m",
        text="t",
        slot=slot,
        is_latest=True,
        is_inference=False,
        is_forgotten=False,
        occurred_at=None,
        document_id=document,
        source_indexes=indexes,
    )


@pytest.mark.parametrize(
    ("slot", "document", "indexes", "provenance", "forgotten"),
    [
        pytest.param("switch_reason", "other", (), True, True, id="its-slot-anywhere"),
        pytest.param("intent:switch_reason", None, (), True, True, id="a-variant-of-its-slot"),
        pytest.param(None, "doc", (1,), True, True, id="from-its-words"),
        pytest.param(None, "doc", (0, 2), True, False, id="other-words-of-the-session"),
        pytest.param(None, "doc", (), True, True, id="no-indexes-on-the-fact"),
        pytest.param(None, "doc", (), False, True, id="no-provenance-whole-document"),
        pytest.param("supplier", "doc", (1,), True, False, id="about-another-current-field"),
        pytest.param("supplier:b", "doc", (), False, False, id="a-variant-of-another-field"),
        pytest.param("insight:x", "doc", (1,), True, True, id="a-slot-of-no-current-field"),
        pytest.param(None, "other", (1,), True, False, id="another-session"),
        pytest.param(None, None, (1,), False, False, id="a-record-or-no-document"),
    ],
)
def test_which_memories_go_with_a_forgotten_field(
    slot: str | None,
    document: str | None,
    indexes: tuple[int, ...],
    provenance: bool,
    forgotten: bool,
) -> None:
    said = {"doc": frozenset({1, 3})}
    fact = _fact(slot, document, indexes)
    chosen = is_forgotten_with(
        fact, "switch_reason", said, current_fields={"supplier"}, provenance=provenance
    )
    assert chosen is forgotten
