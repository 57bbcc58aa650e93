"""A request to forget that concerns no field names the subject's earlier lines closest to it
(ADR 0174): pending, it reaches a reviewer; approved, those lines' words and the backend
memories drawn from them go, while memories about a field still held stay."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from factledger.application.ledger.commands import ApproveChange, RejectChange
from factledger.application.memory.record_ids import namespace_for, transcript_document_id
from factledger.application.proposals.forget_requests import request_id_for
from factledger.application.review.forget_requests import LINE_MIN, MAX_LINES
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import ChangeStatus, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.values import ListValue

from .conftest import MODEL, TENANT, Rig, day
from .test_forget_requests_said import AGENT, LEAD, REVIEWER, TableJudge
from .test_forget_requests_said import worker as worker_without_lines

EX = "My ex and I split up in the spring."
BUDGET = "Our budget is 40k."
SPRING = "It was a hard spring for us."
ASKS = "Please delete what I told you about my ex."


@dataclass(frozen=True)
class LineJudge(TableJudge):
    """Close to a line by the table; every field's name and words far from every sentence."""

    table: dict[str, float] = field(default_factory=lambda: {EX: 0.7, BUDGET: 0.1})


def worker(rig: Rig, judge: TableJudge) -> SyncWorker:
    """The sync with the option on, as the product's setting is (ADR 0175)."""
    feed = LedgerEventFeed(rig.ledger)
    proposer = SessionProposer(
        rig.ledger, rig.extractor, MODEL, judge=judge, forget_said_lines=True
    )
    ports = SyncPorts(rig.store, feed, feed, rig.backend, proposer=proposer, judge=judge)
    return SyncWorker(ports, SyncOptions(backoff_s=0.0))


async def _lead(rig: Rig, judge: TableJudge) -> UUID:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "How are things?"), (LEAD, EX), (LEAD, BUDGET))
    await worker(rig, judge).run_once()
    return lead


async def _ask(rig: Rig, judge: TableJudge, lead: UUID, session: str = "s2") -> None:
    rig.record(lead, session, day(4, 3), (AGENT, "Anything else?"), (LEAD, f"Thanks. {ASKS}"))
    await worker(rig, judge).run_once()


def _said_requests(rig: Rig, lead: UUID) -> list[ChangeRecord]:
    changes = rig.subject(lead).changes.values()
    return [c for c in changes if c.operation is Operation.FORGET_SAID]


async def test_a_request_about_no_field_names_the_closest_earlier_line(rig: Rig) -> None:
    judge = LineJudge()
    lead = await _lead(rig, judge)
    await _ask(rig, judge, lead)
    (request,) = _said_requests(rig, lead)
    assert request.status is ChangeStatus.PENDING
    assert request.field == SAID_LINES
    assert request.proposal.value == ListValue((line_ref("s1", 1),))  # not the budget's line
    assert request.proposal.origin is Origin.STATED
    assert request.proposal.evidence is not None
    assert request.proposal.evidence.quote == ASKS
    assert request.change_id == request_id_for(lead, "s2", MODEL, SAID_LINES)
    assert not [c for c in rig.subject(lead).changes.values() if c.operation is Operation.FORGET]


async def test_a_keyword_the_request_shares_brings_its_line_closer(rig: Rig) -> None:
    # The hard spring reads closer, but only the line about the ex shares a word of the request.
    judge = LineJudge(table={EX: 0.15, SPRING: LINE_MIN})
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "Hi"), (LEAD, SPRING), (LEAD, EX))
    await worker(rig, judge).run_once()
    await _ask(rig, judge, lead)
    (request,) = _said_requests(rig, lead)
    assert request.proposal.value == ListValue((line_ref("s1", 2),))
    assert MAX_LINES == 1  # a reviewer's approval forgets every line named


async def test_nothing_close_enough_proposes_nothing(rig: Rig) -> None:
    judge = LineJudge(table={SPRING: LINE_MIN - 0.01})
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "Hi"), (LEAD, SPRING))
    await worker(rig, judge).run_once()
    await _ask(rig, judge, lead)
    assert _said_requests(rig, lead) == []


async def test_approving_it_forgets_the_line_and_its_memories_only(rig: Rig) -> None:
    judge = LineJudge()
    lead = await _lead(rig, judge)
    ns = namespace_for(lead)
    document = transcript_document_id(lead, "s1")
    before = await rig.backend.list_memories(ns)
    from_ex = [m for m in before if m.document_id == document and 1 in m.source_indexes]
    assert from_ex, "the fake backend draws a memory from the line"
    await _ask(rig, judge, lead)
    (request,) = _said_requests(rig, lead)
    version = rig.subject(lead).profile_version

    rig.ledger.approve_change(ApproveChange(TENANT, lead, request.change_id, REVIEWER.id))
    subject = rig.subject(lead)
    assert subject.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert not subject.sessions["s1"].messages[1][1]  # the line's key is gone
    assert subject.sessions["s1"].messages[2][1] == BUDGET
    assert not subject.sessions["s2"].messages[1][1]  # and the request's own line
    assert subject.profile_version == version  # no field changed

    await worker(rig, judge).run_once()
    after = await rig.backend.list_memories(ns)
    assert not [m for m in after if m.id in {f.id for f in from_ex}]
    assert any(BUDGET.rstrip(".").split()[-1] in m.text for m in after)  # the budget stays


async def test_rejecting_it_keeps_the_line_and_a_rerun_proposes_nothing_again(rig: Rig) -> None:
    judge = LineJudge()
    lead = await _lead(rig, judge)
    await _ask(rig, judge, lead)
    (request,) = _said_requests(rig, lead)
    rig.ledger.reject_change(RejectChange(TENANT, lead, request.change_id, REVIEWER, "no"))
    assert rig.subject(lead).sessions["s1"].messages[1][1] == EX
    rig.expire_leases()
    await worker(rig, judge).run_once()
    assert len(_said_requests(rig, lead)) == 1


async def test_with_the_option_off_a_request_about_no_field_proposes_nothing(rig: Rig) -> None:
    judge = LineJudge()
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (AGENT, "How are things?"), (LEAD, EX))
    await worker_without_lines(rig, judge).run_once()
    rig.record(lead, "s2", day(4, 3), (AGENT, "Anything else?"), (LEAD, ASKS))
    await worker_without_lines(rig, judge).run_once()
    assert _said_requests(rig, lead) == []
    assert rig.subject(lead).sessions["s1"].messages[1][1] == EX  # nothing forgotten
