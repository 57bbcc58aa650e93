"""A request to forget, said in conversation, is a pending change of its field: approving it
forgets the field (by whoever decided), rejecting it keeps the field and records why."""

from __future__ import annotations

import pytest

from factledger.domain.errors import (
    ChangeNotPendingError,
    FieldNotPresentError,
    InvalidOperationError,
)
from factledger.domain.events import FactForgotten
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Evidence, Operation
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import FINGERPRINT_KEY, REVIEWER, T0, proposal, session

ASKS = "Please forget who our supplier is."
CHANNEL = Actor(ActorKind.SYSTEM, "channel-svc")


def _request(subject: Subject) -> Proposal:
    subject.record_session(session("s2", ASKS), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(
        operation=Operation.FORGET,
        evidence=Evidence("s2", 1, ASKS),
        based_on=subject.profile_version,
    )
    subject.propose(request, OPEN_SCHEMA, at=T0)
    return request


def test_a_request_is_pending_and_takes_nothing_yet(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    request = _request(subject)
    assert subject.changes[request.change_id].status is ChangeStatus.PENDING
    assert "supplier" in subject.fields


def test_approving_it_forgets_the_field_and_confirms_the_request(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, change = with_supplier
    request = _request(subject)
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    assert "supplier" not in subject.fields
    assert "supplier" in subject.forgotten_fields
    assert subject.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert subject.changes[request.change_id].decided_by == REVIEWER
    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert forgot.request_id == str(request.change_id)
    assert str(request.change_id) not in forgot.withdrawn_changes
    # The request's own words and the value's go with the field.
    lines = {(r["session_id"], r["message_index"]) for r in forgot.evidence_refs}
    assert {("s1", 1), ("s2", 1)} <= lines
    assert change.change_id in subject.changes


def test_the_subjects_later_words_approve_it_and_are_forgotten_too(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    request = _request(subject)
    subject.record_session(
        session("s3", "Yes, please do forget it."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    by = Decision(
        Actor(ActorKind.SUBJECT, str(subject.id)),
        evidence=Evidence("s3", 1, "Yes, please do forget it."),
        relayed_by=CHANNEL,
    )
    subject.confirm(request.change_id, by, at=T0)
    record = subject.changes[request.change_id]
    assert record.status is ChangeStatus.CONFIRMED
    assert record.relayed_by == CHANNEL
    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert {"session_id": "s3", "message_index": 1} in forgot.evidence_refs


def test_rejecting_it_keeps_the_field_and_the_reason(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    request = _request(subject)
    subject.reject(request.change_id, by=Decision(REVIEWER), reason="not asked by the lead", at=T0)
    assert subject.fields["supplier"].value == TextValue("Supplier A")
    assert subject.changes[request.change_id].status is ChangeStatus.REJECTED
    with pytest.raises(ChangeNotPendingError):
        subject.confirm(request.change_id, Decision(REVIEWER), at=T0)


def test_a_request_for_a_field_with_nothing_to_forget_is_refused(subject: Subject) -> None:
    subject.record_session(session("s2", ASKS), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(operation=Operation.FORGET, evidence=Evidence("s2", 1, ASKS))
    with pytest.raises(FieldNotPresentError):
        subject.propose(request, OPEN_SCHEMA, at=T0)


def test_a_request_takes_no_value(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    subject.record_session(session("s2", ASKS), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(
        operation=Operation.FORGET,
        value=TextValue("x"),
        evidence=Evidence("s2", 1, ASKS),
        based_on=subject.profile_version,
    )
    with pytest.raises(InvalidOperationError):
        subject.propose(request, OPEN_SCHEMA, at=T0)


def test_a_hedged_request_needs_no_condition(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    said = "Could you maybe forget our supplier?"
    subject.record_session(session("s2", said), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(operation=Operation.FORGET, evidence=Evidence("s2", 1, said), based_on=1)
    assert subject.propose(request, OPEN_SCHEMA, at=T0)


def test_a_replayed_subject_holds_the_same_decision(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    request = _request(subject)
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    events = subject.collect_events()
    replayed = None
    for event in events:
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Subject)
    assert replayed.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert "supplier" not in replayed.fields
