"""A list item the subject says no longer holds is proposed for removal (ADR 0159): the held
items are read against the session's subject sentences by a `DroppedItemsReader` (a scripted
one here), and each field's dropped items become one `remove` quoting the sentence."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from uuid import UUID

import pytest
from structlog.testing import capture_logs

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.application.ledger.commands import (
    ApproveChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.proposals.dropped import DroppedItem, HeldList, held_lists
from factledger.application.proposals.schema import FieldFeed, KindFeeds
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.provenance import ChangeStatus, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import ListValue, ProfileSchema, ValueType
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

from .conftest import MODEL, TENANT, day

KIND = "patient"
FEEDS = KindFeeds(
    (
        FieldFeed("medications", ValueType.LIST, ("medications",)),
        FieldFeed("allergies", ValueType.LIST, ("allergies",)),
        FieldFeed("insurer", ValueType.TEXT, ("insurer",)),
    )
)
FIRST = "I take metformin, atorvastatin and aspirin. Allergic to penicillin."
LATER = "Oh, and the cardiologist took me off the aspirin last month."


@dataclass
class ScriptedDrops:
    """Drops `item` of `field` in every sentence holding `words`; keeps what it was asked."""

    drops: dict[str, tuple[str, str]]  # words -> (field, item)
    asked: list[tuple[tuple[HeldList, ...], tuple[str, ...]]] = field(default_factory=list)

    async def dropped(
        self, lists: Sequence[HeldList], sentences: Sequence[str]
    ) -> list[DroppedItem]:
        self.asked.append((tuple(lists), tuple(sentences)))
        held = {(h.field, i) for h in lists for i in h.items}
        return [
            DroppedItem(f, item, n)
            for n, sentence in enumerate(sentences)
            for words, (f, item) in self.drops.items()
            if words in sentence and (f, item) in held
        ]


def fact(key: str, slot: str, value: str) -> ExtractedFact:
    return ExtractedFact(key, f"{slot}: {value}", slot, (0,), value=value)


FIRST_FACTS = (
    fact("f0", "medications", "metformin"),
    fact("f1", "medications", "atorvastatin"),
    fact("f2", "medications", "aspirin"),
    fact("f3", "allergies", "penicillin"),
)


@pytest.fixture
def ledger() -> Iterator[Ledger]:
    schema = ProfileSchema({f.field: f.type for f in FEEDS.fields})
    ledger = Ledger(
        popo_env(), clock=ManualClock(day(4, 1)), keys=InMemoryKeyStore(), schemas={KIND: schema}
    )
    yield ledger
    ledger.close()


@dataclass
class Rig:
    ledger: Ledger
    sync: SyncWorker
    extractor: ScriptedExtractor
    reader: ScriptedDrops
    subject_id: UUID

    async def said(self, session: str, month: int, *lines: tuple[Role, str]) -> None:
        at = day(month, 2)
        said = tuple(Message(role, text, at) for role, text in lines)
        # Only the first intake states facts; every other session states none.
        facts = FIRST_FACTS if [t for _, t in lines] == [FIRST] else ()
        self.extractor.script_transcript(said, *facts)
        self.ledger.record_session(
            RecordSession(TENANT, self.subject_id, session, Channel.CHAT, at, at, said)
        )
        assert (await self.sync.run_once()).dead == 0

    def pending(self, operation: Operation) -> dict[str, ListValue]:
        subject = self.ledger.subject(TENANT, self.subject_id)
        return {
            c.field: c.proposal.value
            for c in subject.changes.values()
            if c.status is ChangeStatus.PENDING
            and c.operation is operation
            and isinstance(c.proposal.value, ListValue)
        }


@pytest.fixture
def rig(ledger: Ledger) -> Rig:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, "p-1")).subject_id
    extractor = ScriptedExtractor()
    reader = ScriptedDrops({"off the aspirin": ("medications", "aspirin")})
    proposer = SessionProposer(ledger, extractor, MODEL, feeds={KIND: FEEDS}, dropped=reader)
    clock = ManualClock(day(4, 2))
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    feed = LedgerEventFeed(ledger)
    ports = SyncPorts(InMemorySyncStore(), feed, feed, backend, proposer=proposer)
    sync = SyncWorker(ports, SyncOptions(backoff_s=0.0))
    return Rig(ledger, sync, extractor, reader, subject_id)


async def test_an_item_said_dropped_later_is_proposed_for_removal_quoting_the_sentence(
    rig: Rig,
) -> None:
    await rig.said("s-1", 4, (Role.SUBJECT, FIRST))
    await rig.said("s-2", 5, (Role.AGENT, "How are you?"), (Role.SUBJECT, f"Fine. {LATER}"))

    assert rig.pending(Operation.REMOVE) == {"medications": ListValue(("aspirin",))}
    subject = rig.ledger.subject(TENANT, rig.subject_id)
    (removal,) = [c for c in subject.changes.values() if c.operation is Operation.REMOVE]
    assert removal.proposal.origin is Origin.STATED
    assert removal.proposal.evidence is not None
    assert (removal.proposal.evidence.message_index, removal.proposal.evidence.quote) == (1, LATER)
    assert removal.proposal.rationale is not None
    assert removal.proposal.rationale.startswith("removal of medications: said")
    # The extension it takes from stays pending: a reviewer decides both.
    assert rig.pending(Operation.APPEND)["medications"] == ListValue(
        ("metformin", "atorvastatin", "aspirin")
    )
    # The reader was asked about the held lists and the subject's sentences only.
    lists, sentences = rig.reader.asked[-1]
    assert {h.field: h.items for h in lists} == {
        "medications": ("metformin", "atorvastatin", "aspirin"),
        "allergies": ("penicillin",),
    }
    assert sentences == ("Fine.", LATER)


async def test_nothing_is_read_before_a_list_is_held_and_a_rerun_proposes_it_once(
    rig: Rig,
) -> None:
    await rig.said("s-1", 4, (Role.SUBJECT, LATER))
    assert rig.reader.asked == []  # nothing held yet: the reader is not asked
    await rig.said("s-2", 4, (Role.SUBJECT, FIRST))
    await rig.said("s-3", 5, (Role.SUBJECT, LATER))
    await rig.said("s-4", 6, (Role.SUBJECT, LATER))  # said again: the open removal stands

    subject = rig.ledger.subject(TENANT, rig.subject_id)
    removals = [c for c in subject.changes.values() if c.operation is Operation.REMOVE]
    assert [r.proposal.value for r in removals] == [ListValue(("aspirin",))]
    # A removal pending, the item is no longer read as held.
    held = {h.field: h.items for h in held_lists(subject, FEEDS)}
    assert held["medications"] == ("metformin", "atorvastatin")


async def test_confirming_the_removal_takes_the_item_off_the_confirmed_list(
    rig: Rig,
) -> None:
    await rig.said("s-1", 4, (Role.SUBJECT, FIRST))
    extension = next(
        c
        for c in rig.ledger.subject(TENANT, rig.subject_id).changes.values()
        if c.field == "medications"
    )
    rig.ledger.approve_change(ApproveChange(TENANT, rig.subject_id, extension.change_id, "r-1"))
    await rig.said("s-2", 5, (Role.SUBJECT, LATER))
    (removal,) = [
        c
        for c in rig.ledger.subject(TENANT, rig.subject_id).changes.values()
        if c.operation is Operation.REMOVE
    ]
    rig.ledger.approve_change(ApproveChange(TENANT, rig.subject_id, removal.change_id, "r-1"))

    subject = rig.ledger.subject(TENANT, rig.subject_id)
    assert subject.fields["medications"].value == ListValue(("metformin", "atorvastatin"))


async def test_an_item_the_subject_never_held_is_not_proposed_for_removal(
    rig: Rig,
) -> None:
    await rig.said("s-1", 4, (Role.SUBJECT, "Allergic to penicillin."))
    # The scripted reader drops the aspirin, which the subject never held: nothing proposed.
    await rig.said("s-2", 5, (Role.SUBJECT, LATER))
    assert rig.pending(Operation.REMOVE) == {}


class FailingDrops:
    """A reader whose model fails on every session."""

    async def dropped(
        self, lists: Sequence[HeldList], sentences: Sequence[str]
    ) -> list[DroppedItem]:
        raise RuntimeError("the model's fault")


async def test_a_reader_that_fails_costs_the_removals_only(ledger: Ledger) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, KIND, "p-2")).subject_id
    extractor = ScriptedExtractor()
    proposer = SessionProposer(
        ledger, extractor, MODEL, feeds={KIND: FEEDS}, dropped=FailingDrops()
    )
    backend = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=ManualClock(day(4, 2))
    )
    feed = LedgerEventFeed(ledger)
    sync = SyncWorker(
        SyncPorts(InMemorySyncStore(), feed, feed, backend, proposer=proposer),
        SyncOptions(backoff_s=0.0),
    )
    rig = Rig(ledger, sync, extractor, ScriptedDrops({}), subject_id)
    await rig.said("s-1", 4, (Role.SUBJECT, FIRST))

    with capture_logs() as logs:
        await rig.said("s-2", 5, (Role.SUBJECT, LATER))  # dead == 0: the item is done

    assert rig.pending(Operation.REMOVE) == {}
    assert set(rig.pending(Operation.APPEND)) == {"medications", "allergies"}
    (failed,) = [e for e in logs if e["event"] == "proposals.dropped_items_failed"]
    assert failed["error_type"] == "RuntimeError"
    assert "aspirin" not in str(failed)
    assert ledger.subject(TENANT, subject_id).has_reviewed("s-2")
