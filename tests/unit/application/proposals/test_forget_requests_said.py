"""A request to forget said in a session becomes the model's pending request on the field it
concerns, placed by the field's name said or by its closeness to what the field holds (ADR
0171); the request sentence reaches neither the extractor nor the memory backend; a rerun
proposes nothing twice."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from factledger.application.errors import ModelUnavailableError
from factledger.application.judgement.ports import FieldMentions, SentenceCloseness
from factledger.application.judgement.types import (
    FieldStatement,
    Judgement,
    Reply,
    Statement,
)
from factledger.application.ledger.commands import ApproveChange, RejectChange
from factledger.application.memory.record_ids import namespace_for
from factledger.application.proposals.forget_requests import request_id_for
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Operation, Origin
from factledger.domain.transcript import Message, Role

from .conftest import MODEL, TENANT, Rig, day

AGENT, LEAD = Role.AGENT, Role.SUBJECT
ASKS_BY_NAME = "Please delete what I told you about our budget."
ASKS_BY_VALUE = "Please delete the 40k I mentioned."
ASKS_BY_MEANING = "Please delete how much we can spend."
REVIEWER = Actor(ActorKind.STAFF, "rev-1")


@dataclass(frozen=True)
class PhraseJudge:
    """Reads a sentence as a request to forget when it starts "Please delete"; a text's
    similarity to a sentence is the share of the text's words the sentence says, and the
    name of the field `meaning` is 0.35 close to any sentence (the learned judge's own tests
    are the adapter's)."""

    meaning: str = "budget"

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        return [
            Judgement(
                Statement.SELF,
                0.9,
                hedged=False,
                forget_request=s.startswith("Please delete"),
                correction=False,
            )
            for s in sentences
        ]

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]:
        return []

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        said = set(_words(sentence))
        return [
            0.35 if text == self.meaning.replace("_", " ") else _share(_words(text), said)
            for text in texts
        ]

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return [Reply.NEITHER for _ in pairs]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _share(words: list[str], said: set[str]) -> float:
    return sum(w in said for w in words) / len(words) if words else 0.0


def worker(
    rig: Rig,
    judge: PhraseJudge,
    second_reading: SentenceCloseness | None = None,
    mentions: FieldMentions | None = None,
) -> SyncWorker:
    feed = LedgerEventFeed(rig.ledger)
    proposer = SessionProposer(
        rig.ledger,
        rig.extractor,
        MODEL,
        judge=judge,
        placement_reading=second_reading,
        placement_mentions=mentions,
    )
    ports = SyncPorts(rig.store, feed, feed, rig.backend, proposer=proposer, judge=judge)
    return SyncWorker(ports, SyncOptions(backoff_s=0.0))


async def _with_budget(rig: Rig, judge: PhraseJudge) -> UUID:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "What can you spend?"), (LEAD, "Our budget is 40k."))
    await worker(rig, judge).run_once()
    (budget,) = [c for c in rig.subject(lead).changes.values() if c.field == "budget"]
    rig.ledger.approve_change(ApproveChange(TENANT, lead, budget.change_id, REVIEWER.id))
    return lead


def _requests(rig: Rig, lead: UUID) -> list[ChangeRecord]:
    subject = rig.subject(lead)
    return [c for c in subject.changes.values() if c.operation is Operation.FORGET]


async def _ask(
    rig: Rig,
    judge: PhraseJudge,
    lead: UUID,
    said: str,
    session: str = "s2",
    second_reading: SentenceCloseness | None = None,
    mentions: FieldMentions | None = None,
) -> None:
    rig.record(
        lead,
        session,
        day(4, 3),
        (AGENT, "Anything else?"),
        (LEAD, f"We are still deciding. {said}"),
    )
    await worker(rig, judge, second_reading, mentions).run_once()


async def test_a_request_naming_the_field_is_pending_on_it(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    await _ask(rig, judge, lead, ASKS_BY_NAME)
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
    assert request.status is ChangeStatus.PENDING
    proposal = request.proposal
    assert proposal.origin is Origin.STATED
    assert proposal.value is None
    assert proposal.evidence is not None
    assert proposal.evidence.quote == ASKS_BY_NAME
    assert proposal.evidence.message_index == 1
    assert proposal.change_id == request_id_for(lead, "s2", MODEL, "budget")
    assert "by name" in (proposal.rationale or "")
    assert "budget" in rig.subject(lead).fields


async def test_a_request_saying_the_value_or_near_the_field_is_placed_by_meaning(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    await _ask(rig, judge, lead, ASKS_BY_VALUE)
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
    assert (request.proposal.rationale or "").endswith("meaning")  # "40k" is a word it holds
    rig.ledger.reject_change(
        RejectChange(TENANT, lead, request.change_id, REVIEWER, "not what was meant")
    )
    await _ask(rig, judge, lead, ASKS_BY_MEANING, session="s3")
    by_meaning = [r for r in _requests(rig, lead) if r.status is ChangeStatus.PENDING]
    assert [(r.proposal.rationale or "").endswith("meaning") for r in by_meaning] == [True]


async def test_the_request_sentence_is_no_memory_and_no_fact(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    await _ask(rig, judge, lead, ASKS_BY_NAME)
    space = rig.backend._spaces[namespace_for(lead)]
    said = [m.text for doc in space.documents.values() for m in doc.transcript]
    assert "We are still deciding." in said
    assert not any("Please delete" in text for text in said)
    memories = await rig.backend.list_memories(namespace_for(lead))
    assert not any("Please delete" in m.text for m in memories)
    # Nothing but the request was proposed from the session.
    s2 = [
        c
        for c in rig.subject(lead).changes.values()
        if c.proposal.evidence is not None and c.proposal.evidence.session_id == "s2"
    ]
    assert [c.operation for c in s2] == [Operation.FORGET]


async def test_approving_forgets_the_field_and_a_rerun_proposes_nothing_again(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    await _ask(rig, judge, lead, ASKS_BY_NAME)
    (request,) = _requests(rig, lead)
    rig.ledger.approve_change(ApproveChange(TENANT, lead, request.change_id, REVIEWER.id))
    subject = rig.subject(lead)
    assert "budget" not in subject.fields
    assert "budget" in subject.forgotten_fields
    assert subject.changes[request.change_id].status is ChangeStatus.CONFIRMED
    lines = rig.ledger.forgotten_lines(lead, field="budget", memory_id=None)
    assert ("s1", 1) in lines
    assert ("s2", 1) in lines
    rig.expire_leases()
    await worker(rig, judge).run_once()
    assert len(_requests(rig, lead)) == 1


async def test_a_request_about_nothing_held_proposes_nothing(rig: Rig) -> None:
    judge = PhraseJudge(meaning="timeline")
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "Hi"), (LEAD, "Please delete my notes."))
    await worker(rig, judge).run_once()
    assert _requests(rig, lead) == []


@dataclass(frozen=True)
class TableJudge(PhraseJudge):
    """`PhraseJudge` whose similarity of a text to any sentence is the table's (0 if absent)."""

    table: Mapping[str, float] = field(default_factory=dict)

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        return [self.table.get(text, 0.0) for text in texts]


async def _with_supplier_and_budget(rig: Rig, judge: PhraseJudge) -> UUID:
    lead = rig.register()
    said = "We buy from Boxmart. Our budget is 40k."
    rig.record(lead, "s1", day(4, 2), (AGENT, "Who do you buy from?"), (LEAD, said))
    await worker(rig, judge).run_once()
    assert {c.field for c in rig.subject(lead).changes.values()} == {"supplier", "budget"}
    return lead


async def test_every_field_the_request_names_and_is_close_to_gets_a_request(rig: Rig) -> None:
    judge = TableJudge(table={"budget": 0.5, "supplier": 0.45})
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(rig, judge, lead, "Please delete our budget and supplier.")
    requests = _requests(rig, lead)
    assert sorted(r.field for r in requests) == ["budget", "supplier"]
    assert all("by name" in (r.proposal.rationale or "") for r in requests)


async def test_a_named_field_not_close_gives_way_to_the_field_holding_the_words(
    rig: Rig,
) -> None:
    # "budget" is said of something else: the words asked about are the supplier's.
    judge = TableJudge(table={"budget": 0.1, "Boxmart": 0.6, "40k": 0.1})
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(rig, judge, lead, "Please delete the budget talk about Boxmart.")
    (request,) = _requests(rig, lead)
    assert request.field == "supplier"
    assert (request.proposal.rationale or "").endswith("meaning")


async def test_only_the_closest_field_and_only_over_the_bar(rig: Rig) -> None:
    judge = TableJudge(table={"Boxmart": 0.25, "40k": 0.2})
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(rig, judge, lead, "Please delete that thing I said.")
    assert _requests(rig, lead) == []  # 0.25: under the bar, close to nothing held
    closer = TableJudge(table={"Boxmart": 0.5, "40k": 0.4})
    await _ask(rig, closer, lead, "Please delete that thing I said.", session="s3")
    (request,) = _requests(rig, lead)
    assert request.field == "supplier"


@dataclass
class TableReading:
    """A second encoder's reading: each text's similarity from the table (0 if absent); it
    raises `ModelUnavailableError` while `failing` (its model not loaded)."""

    table: Mapping[str, float]
    failing: bool = False
    read: list[str] = field(default_factory=list)

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        if self.failing:
            raise ModelUnavailableError("the encoder is not loaded")
        self.read.append(sentence)
        return [self.table.get(text, 0.0) for text in texts]


async def test_a_second_reading_places_by_the_mean_of_both(rig: Rig) -> None:
    # The judge alone reads the request closest to the budget (0.35 against 0.2); the second
    # reading is sure it speaks of the supplier: the mean (0.5 against 0.2) places it there.
    judge = TableJudge(table={"Boxmart": 0.2, "40k": 0.35})
    second = TableReading({"Boxmart": 0.8, "40k": 0.05})
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(rig, judge, lead, "Please delete the one we buy from.", second_reading=second)
    (request,) = _requests(rig, lead)
    assert request.field == "supplier"
    assert (request.proposal.rationale or "").endswith("meaning")
    assert second.read == ["Please delete the one we buy from."]


async def test_the_mean_keeps_the_bar(rig: Rig) -> None:
    # 0.35 alone would clear the bar (0.3); with a second reading of 0.1 the mean does not.
    judge = TableJudge(table={"Boxmart": 0.35})
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(
        rig, judge, lead, "Please delete that.", second_reading=TableReading({"Boxmart": 0.1})
    )
    assert _requests(rig, lead) == []


async def test_a_second_reading_that_cannot_load_holds_the_session_until_it_can(
    rig: Rig,
) -> None:
    judge = TableJudge(table={"Boxmart": 0.2, "40k": 0.35})
    second = TableReading({"Boxmart": 0.8, "40k": 0.05}, failing=True)
    lead = await _with_supplier_and_budget(rig, judge)
    await _ask(rig, judge, lead, "Please delete the one we buy from.", second_reading=second)
    assert _requests(rig, lead) == []  # not placed by one reading: held, not lost
    second.failing = False
    rig.expire_leases()
    await worker(rig, judge, second).run_once()
    (request,) = _requests(rig, lead)
    assert request.field == "supplier"


@dataclass
class ReadMentions:
    """Speaks of the fields in `spoken` only; records what it was asked."""

    spoken: frozenset[str]
    failing: bool = False
    read: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    async def speaks_of(self, sentence: str, fields: Sequence[str]) -> list[bool]:
        if self.failing:
            raise ModelUnavailableError("the field reader is not loaded")
        self.read.append((sentence, tuple(fields)))
        return [f in self.spoken for f in fields]


async def test_a_request_placed_by_meaning_needs_the_reader_to_read_it_speaking_of_the_field(
    rig: Rig,
) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    silent = ReadMentions(frozenset())
    await _ask(rig, judge, lead, ASKS_BY_MEANING, mentions=silent)
    assert _requests(rig, lead) == []  # closest, over the bar, but not spoken of
    # Asked of the kind's fields together, the one it is closest to among them.
    ((sentence, fields),) = silent.read
    assert sentence == ASKS_BY_MEANING
    assert "budget" in fields
    assert len(fields) > 1
    await _ask(
        rig, judge, lead, ASKS_BY_MEANING, "s3", mentions=ReadMentions(frozenset({"budget"}))
    )
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
    assert (request.proposal.rationale or "").endswith("meaning")


async def test_a_request_naming_its_field_is_placed_without_asking_the_reader(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    silent = ReadMentions(frozenset())
    await _ask(rig, judge, lead, ASKS_BY_NAME, mentions=silent)
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
    assert silent.read == []


async def test_a_reader_that_cannot_load_holds_the_session_until_it_can(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    reader = ReadMentions(frozenset({"budget"}), failing=True)
    await _ask(rig, judge, lead, ASKS_BY_MEANING, mentions=reader)
    assert _requests(rig, lead) == []  # held, not placed by closeness alone, not lost
    reader.failing = False
    rig.expire_leases()
    await worker(rig, judge, mentions=reader).run_once()
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
