"""A request to forget said in a session becomes the model's pending request on the field it
concerns, placed by name, by value or by the field head; the request sentence reaches
neither the extractor nor the memory backend; a rerun proposes nothing twice."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from uuid import UUID

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
    """Reads a sentence as a request to forget when it starts "Please delete"; ranks the
    field `meaning` first for any sentence (the learned judge's own tests are the adapter's)."""

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

    async def field_of(self, sentence: str, fields: Sequence[str]) -> tuple[str, float] | None:
        return (self.meaning, 0.4) if self.meaning in fields else None

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return [Reply.NEITHER for _ in pairs]


def worker(rig: Rig, judge: PhraseJudge) -> SyncWorker:
    feed = LedgerEventFeed(rig.ledger)
    proposer = SessionProposer(rig.ledger, rig.extractor, MODEL, judge=judge)
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


async def _ask(rig: Rig, judge: PhraseJudge, lead: UUID, said: str, session: str = "s2") -> None:
    rig.record(
        lead,
        session,
        day(4, 3),
        (AGENT, "Anything else?"),
        (LEAD, f"We are still deciding. {said}"),
    )
    await worker(rig, judge).run_once()


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


async def test_a_request_saying_the_value_or_only_its_meaning_is_placed_too(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    await _ask(rig, judge, lead, ASKS_BY_VALUE)
    (request,) = _requests(rig, lead)
    assert "by value" in (request.proposal.rationale or "")
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
