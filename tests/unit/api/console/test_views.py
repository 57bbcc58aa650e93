"""What the console's pages assemble: the evidence in context and the queue's filters."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

from factledger.api.console.queue_view import QueueFilters
from factledger.api.console.subject_view import evidence_context
from factledger.application.ledger.queries import PendingChange
from factledger.domain.provenance import Actor, ActorKind, Evidence, Origin
from factledger.domain.sessions import SessionRecord
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role

AT = datetime(2026, 1, 12, 10, tzinfo=UTC)
LINES = [
    (Role.AGENT, f"question {n}") if n % 2 == 0 else (Role.SUBJECT, f"answer {n}.")
    for n in range(10)
]


def _subject() -> Subject:
    subject = Subject.register("acme", "lead", "lead-1", at=AT)
    transcript = tuple(Message(role, text, AT) for role, text in LINES)
    subject.record_session(SessionRecord("s-1", Channel.CHAT, AT, AT, transcript), at=AT)
    return subject


def test_the_quote_is_split_out_of_its_message_among_its_neighbours() -> None:
    lines = evidence_context(_subject(), Evidence("s-1", 5, "answer 5"))
    assert [line.index for line in lines] == [2, 3, 4, 5, 6, 7, 8]
    quoted = [line for line in lines if line.is_evidence]
    assert [(q.before, q.quote, q.after) for q in quoted] == [("", "answer 5", ".")]


def test_a_quote_that_no_longer_matches_marks_the_whole_message() -> None:
    lines = evidence_context(_subject(), Evidence("s-1", 1, "something else"))
    assert [(line.quote, line.before) for line in lines if line.is_evidence] == [("answer 1.", "")]


def test_no_session_no_context() -> None:
    assert evidence_context(_subject(), Evidence("unknown", 0, "x")) == ()
    assert evidence_context(_subject(), None) == ()


def _pending(origin: Origin, by: Actor) -> PendingChange:
    return PendingChange(
        "acme",
        uuid4(),
        uuid4(),
        "supplier",
        "set",
        None,
        "Supplier A",
        None,
        origin,
        by,
        AT,
        None,
        "",
        0,
    )


def test_filters_match_kind_field_origin_and_proposer() -> None:
    model = Actor(ActorKind.MODEL, "rule@1")
    change = _pending(Origin.INFERRED, model)
    assert QueueFilters().admits(change, "lead")
    assert QueueFilters(kind="lead", field="supplier").admits(change, "lead")
    assert not QueueFilters(kind="customer").admits(change, "lead")
    assert not QueueFilters(origin=Origin.STATED).admits(change, "lead")
    assert QueueFilters(proposer="model:rule@1").admits(change, "lead")
    assert QueueFilters(proposer="rule@1").admits(change, "lead")
    assert not QueueFilters(proposer="agent:rule@1").admits(change, "lead")
