"""Given a subject, when a command, then events or a named error: one test per rule."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from uuid import uuid4

import pytest

from factledger.domain.errors import (
    ChangeAlreadyProposedError,
    ChangeNotFoundError,
    ChangeNotPendingError,
    ConfirmationNotAllowedError,
    ConfirmationWithoutEvidenceError,
    EvidenceNotFoundError,
    FieldNotPresentError,
    InvalidOperationError,
    InvalidReferenceError,
    InvalidSessionError,
    SessionConflictError,
    StaleChangeError,
    StatedWithoutEvidenceError,
    SubjectErasedError,
    TimeWentBackwardsError,
    UnknownFieldError,
    ValueTypeMismatchError,
)
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    FactForgotten,
    SessionRecorded,
    SubjectErased,
)
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Evidence, Operation, Origin
from factledger.domain.subject import Subject, keyed_subject_id
from factledger.domain.values import OPEN_SCHEMA, ListValue, ProfileSchema, TextValue, ValueType
from factledger.testing.subject_builders import (
    FINGERPRINT_KEY,
    MODEL,
    REVIEWER,
    T0,
    approve,
    proposal,
    session,
)

SUBJECT_ACTOR = Actor(ActorKind.SUBJECT, "lead-42")


def declared(event: object) -> type:
    """The event class of `domain.events` the library's per-aggregate class derives from."""
    return next(c for c in type(event).__mro__ if c.__module__ == "factledger.domain.events")


def new_events(subject: Subject) -> list[type]:
    return [declared(e) for e in subject.collect_events()]


def test_the_subject_id_is_derived_from_tenant_kind_and_reference() -> None:
    key = b"k" * 32
    assert keyed_subject_id("acme", "lead", "L1", 0, key) == keyed_subject_id(
        "acme", "lead", "L1", 0, key
    )
    assert keyed_subject_id("acme", "lead", "L1", 0, key) != keyed_subject_id(
        "other", "lead", "L1", 0, key
    )


def test_an_empty_tenant_is_refused() -> None:
    with pytest.raises(InvalidReferenceError):
        Subject.register(" ", "lead", "L1", at=T0, subject_id=uuid4())


def test_recording_a_session_numbers_the_interaction(subject: Subject) -> None:
    subject.collect_events()
    assert (
        subject.record_session(session("s2", "Hi again"), at=T0, fingerprint_key=FINGERPRINT_KEY)
        is True
    )
    events = subject.collect_events()
    assert [declared(e) for e in events] == [SessionRecorded]
    assert isinstance(events[0], SessionRecorded)
    assert events[0].interaction_number == 2


def test_recording_the_same_session_again_is_a_no_op(subject: Subject) -> None:
    subject.collect_events()
    assert subject.record_session(session(), at=T0, fingerprint_key=FINGERPRINT_KEY) is False
    assert new_events(subject) == []


def test_a_session_id_reused_with_other_content_is_a_conflict(subject: Subject) -> None:
    with pytest.raises(SessionConflictError):
        subject.record_session(
            session("s1", "something else"), at=T0, fingerprint_key=FINGERPRINT_KEY
        )


def test_a_session_cannot_end_before_it_starts(subject: Subject) -> None:
    bad = replace(session("s2"), ended_at=T0 - timedelta(minutes=1))
    with pytest.raises(InvalidSessionError):
        subject.record_session(bad, at=T0, fingerprint_key=FINGERPRINT_KEY)


def test_a_stated_change_keeps_its_condition_verbatim(subject: Subject) -> None:
    subject.record_session(
        session("s2", "Maybe next quarter, if the pricing works."),
        at=T0,
        fingerprint_key=FINGERPRINT_KEY,
    )
    change = replace(
        proposal("purchase_intent", TextValue("buy next quarter")),
        condition="if the pricing works",
        evidence=Evidence("s2", 1, "Maybe next quarter, if the pricing works"),
    )
    subject.collect_events()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)
    events = subject.collect_events()
    assert isinstance(events[0], ChangeProposed)
    assert events[0].condition == "if the pricing works"
    assert subject.fields["purchase_intent"].origin is Origin.STATED
    assert subject.fields["purchase_intent"].condition == "if the pricing works"


def test_a_stated_change_needs_evidence(subject: Subject) -> None:
    with pytest.raises(StatedWithoutEvidenceError):
        subject.propose(replace(proposal(), evidence=None), OPEN_SCHEMA, at=T0)


def test_a_stated_change_must_quote_the_subject_not_the_agent(subject: Subject) -> None:
    change = proposal(evidence=Evidence("s1", 0, "who do you buy from"))
    with pytest.raises(StatedWithoutEvidenceError):
        subject.propose(change, OPEN_SCHEMA, at=T0)


@pytest.mark.parametrize(
    "evidence",
    [Evidence("nope", 1, "Supplier A"), Evidence("s1", 9, "Supplier A"), Evidence("s1", 1, "B")],
    ids=["unknown-session", "no-such-message", "quote-not-in-message"],
)
def test_evidence_must_point_at_a_recorded_quote(subject: Subject, evidence: Evidence) -> None:
    with pytest.raises(EvidenceNotFoundError):
        subject.propose(proposal(evidence=evidence), OPEN_SCHEMA, at=T0)


def test_an_inference_may_come_without_evidence(subject: Subject) -> None:
    subject.propose(proposal(origin=Origin.INFERRED), OPEN_SCHEMA, at=T0)
    assert ChangeProposed in new_events(subject)


def test_proposing_the_same_change_again_is_a_no_op(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    assert subject.propose(change, OPEN_SCHEMA, at=T0) is False
    assert new_events(subject) == []


def test_a_change_id_reused_for_another_proposal_is_refused(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(ChangeAlreadyProposedError):
        subject.propose(replace(change, field="other"), OPEN_SCHEMA, at=T0)


def test_the_schema_refuses_unknown_fields_and_wrong_types(subject: Subject) -> None:
    schema = ProfileSchema({"supplier": ValueType.TEXT, "budget": ValueType.MONEY})
    with pytest.raises(UnknownFieldError):
        subject.propose(proposal("colour"), schema, at=T0)
    with pytest.raises(ValueTypeMismatchError):
        subject.propose(proposal("budget", origin=Origin.INFERRED), schema, at=T0)
    subject.propose(proposal("supplier"), schema, at=T0)


@pytest.mark.parametrize(
    ("operation", "value"),
    [
        (Operation.SET, None),
        (Operation.UNSET, TextValue("x")),
        (Operation.APPEND, TextValue("x")),
        (Operation.REMOVE, TextValue("x")),
        (Operation.REMOVE, None),
    ],
    ids=[
        "set-without-value",
        "unset-with-value",
        "append-non-list",
        "remove-non-list",
        "remove-nothing",
    ],
)
def test_operation_and_value_must_fit(
    subject: Subject, operation: Operation, value: TextValue | None
) -> None:
    change = replace(proposal(origin=Origin.INFERRED), operation=operation, value=value)
    with pytest.raises(InvalidOperationError):
        subject.propose(change, OPEN_SCHEMA, at=T0)


def test_append_adds_new_items_to_a_list_field(subject: Subject) -> None:
    for items in (("tea",), ("tea", "coffee")):
        change = proposal("likes", ListValue(items), origin=Origin.INFERRED)
        change = replace(
            change, operation=Operation.APPEND, based_on_version=subject.profile_version
        )
        subject.propose(change, OPEN_SCHEMA, at=T0)
        approve(subject, change)
    assert subject.fields["likes"].value == ListValue(("tea", "coffee"))


def _confirmed_list(subject: Subject, operation: Operation, items: tuple[str, ...]) -> None:
    change = proposal("medications", ListValue(items), origin=Origin.INFERRED)
    change = replace(change, operation=operation, based_on_version=subject.profile_version)
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)


def test_remove_takes_the_named_items_out_and_keeps_the_others(subject: Subject) -> None:
    _confirmed_list(subject, Operation.APPEND, ("metformin", "atorvastatin", "aspirin"))
    # Told apart by words, not case or spacing; an item the list does not hold removes nothing.
    _confirmed_list(subject, Operation.REMOVE, ("Aspirin ", "ibuprofen"))
    assert subject.fields["medications"].value == ListValue(("metformin", "atorvastatin"))
    assert subject.profile_version == 2


def test_removing_every_item_leaves_the_field_absent(subject: Subject) -> None:
    _confirmed_list(subject, Operation.APPEND, ("tea", "coffee"))
    _confirmed_list(subject, Operation.REMOVE, ("coffee", "tea"))
    assert "medications" not in subject.fields


def test_removing_from_a_non_list_field_is_refused(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    change = replace(proposal("supplier", ListValue(("x",)), origin=Origin.INFERRED, based_on=1))
    with pytest.raises(InvalidOperationError, match="remove: the field does not hold a list"):
        subject.propose(replace(change, operation=Operation.REMOVE), OPEN_SCHEMA, at=T0)


def test_appending_to_a_non_list_field_is_refused(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    change = replace(proposal("supplier", ListValue(("x",)), origin=Origin.INFERRED, based_on=1))
    with pytest.raises(InvalidOperationError):
        subject.propose(replace(change, operation=Operation.APPEND), OPEN_SCHEMA, at=T0)


def test_a_reviewer_approval_creates_the_next_profile_version(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    approve(subject, change)
    (event,) = subject.collect_events()
    assert isinstance(event, ChangeConfirmed)
    assert event.profile_version == 1
    assert subject.fields["supplier"].value == TextValue("Supplier A")
    assert subject.fields["supplier"].confirmed_by == REVIEWER


@pytest.mark.parametrize("kind", [ActorKind.MODEL, ActorKind.AGENT, ActorKind.SYSTEM])
def test_a_model_or_agent_can_never_confirm(subject: Subject, kind: ActorKind) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(ConfirmationNotAllowedError):
        subject.confirm(change.change_id, Decision(Actor(kind, "bot")), at=T0)
    with pytest.raises(ConfirmationNotAllowedError):
        subject.reject(change.change_id, by=Decision(Actor(kind, "bot")), reason="no", at=T0)


def test_a_subject_confirmation_needs_evidence(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(ConfirmationWithoutEvidenceError):
        subject.confirm(change.change_id, Decision(SUBJECT_ACTOR), at=T0)


def test_a_subject_confirms_with_their_own_words(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.record_session(
        session("s2", "Yes, that's right."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    words = Evidence("s2", 1, "Yes, that's right")
    subject.confirm(change.change_id, Decision(SUBJECT_ACTOR, evidence=words), at=T0)
    assert subject.fields["supplier"].confirmed_by == SUBJECT_ACTOR


def test_only_pending_changes_can_be_confirmed_or_rejected(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, change = with_supplier
    with pytest.raises(ChangeNotPendingError):
        approve(subject, change)
    with pytest.raises(ChangeNotPendingError):
        subject.reject(change.change_id, by=Decision(REVIEWER), reason="late", at=T0)


def test_a_rejected_change_never_reaches_the_profile(subject: Subject) -> None:
    change = proposal(origin=Origin.INFERRED)
    subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    subject.reject(change.change_id, by=Decision(REVIEWER), reason="a guess", at=T0)
    assert new_events(subject) == [ChangeRejected]
    assert subject.fields == {}
    assert subject.change(change.change_id).status is ChangeStatus.REJECTED


def test_an_unknown_change_is_named(subject: Subject) -> None:
    with pytest.raises(ChangeNotFoundError):
        approve(subject, proposal())


def test_a_proposal_based_on_a_stale_version_is_a_conflict(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    with pytest.raises(StaleChangeError):
        subject.propose(
            proposal("supplier", TextValue("Supplier B"), based_on=0), OPEN_SCHEMA, at=T0
        )


def test_a_stale_version_of_another_field_is_no_conflict(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    assert subject.profile_version == 1  # the supplier's version, not the city's
    subject.collect_events()
    city = proposal("city", TextValue("Lyon"), origin=Origin.INFERRED, based_on=0)
    subject.propose(city, OPEN_SCHEMA, at=T0)
    assert new_events(subject) == [ChangeProposed]
    approve(subject, city)
    assert subject.fields["city"].value == TextValue("Lyon")
    assert subject.profile_version == 2


def test_confirming_a_change_overtaken_by_another_is_a_conflict(subject: Subject) -> None:
    first, second = proposal(), proposal(origin=Origin.INFERRED, value=TextValue("Supplier C"))
    subject.propose(first, OPEN_SCHEMA, at=T0)
    subject.propose(second, OPEN_SCHEMA, at=T0)
    approve(subject, first)
    with pytest.raises(StaleChangeError):
        approve(subject, second)


def test_forgetting_a_field_makes_a_version_without_it(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    pending = proposal(origin=Origin.INFERRED, value=TextValue("Supplier Z"), based_on=1)
    subject.propose(pending, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    subject.forget_field("supplier", by=Decision(SUBJECT_ACTOR), reason="asked", at=T0)
    (event,) = subject.collect_events()
    assert isinstance(event, FactForgotten)
    assert event.profile_version == 2
    assert event.withdrawn_changes == [str(pending.change_id)]
    assert "supplier" not in subject.fields
    assert subject.change(pending.change_id).status is ChangeStatus.FORGOTTEN


def test_forgetting_a_field_withdraws_another_fields_pending_change_quoting_its_line(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    """A reader that also read the supplier's line as the lead's name would keep its words in
    a pending `name` change after the supplier is forgotten; a change quoting another line,
    and a pending request to forget another field, stay."""
    subject, _ = with_supplier
    subject.record_session(
        session("s2", "Our name is Harbor Lane."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    company = proposal(
        "company", TextValue("Harbor Lane"), evidence=Evidence("s2", 1, "Harbor Lane"), based_on=1
    )
    subject.propose(company, OPEN_SCHEMA, at=T0)
    approve(subject, company)
    same_line = proposal("name", evidence=Evidence("s1", 1, "Supplier A"), based_on=2)
    other_line = proposal("team", evidence=Evidence("s2", 1, "Harbor Lane"), based_on=2)
    forget_request = proposal(
        "company", operation=Operation.FORGET, evidence=Evidence("s1", 1, "Supplier A"), based_on=2
    )
    for change in (same_line, other_line, forget_request):
        subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.collect_events()

    subject.forget_field("supplier", by=Decision(SUBJECT_ACTOR), reason="asked", at=T0)

    (event,) = subject.collect_events()
    assert isinstance(event, FactForgotten)
    assert event.withdrawn_changes == [str(same_line.change_id)]
    assert subject.change(same_line.change_id).status is ChangeStatus.FORGOTTEN
    assert subject.change(other_line.change_id).status is ChangeStatus.PENDING
    assert subject.change(forget_request.change_id).status is ChangeStatus.PENDING


def test_forgetting_an_absent_field_is_refused(subject: Subject) -> None:
    with pytest.raises(FieldNotPresentError):
        subject.forget_field("supplier", by=Decision(REVIEWER), reason="x", at=T0)


def test_unsetting_an_absent_field_is_refused_at_confirmation(subject: Subject) -> None:
    change = replace(proposal(origin=Origin.INFERRED), operation=Operation.UNSET, value=None)
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(FieldNotPresentError):
        approve(subject, change)


def test_events_cannot_be_dated_before_the_previous_one(subject: Subject) -> None:
    with pytest.raises(TimeWentBackwardsError):
        subject.record_session(
            session("s2", "hi"), at=T0 - timedelta(days=1), fingerprint_key=FINGERPRINT_KEY
        )


def test_a_command_id_is_remembered(subject: Subject) -> None:
    change = replace(proposal(), command_id="cmd-1")
    subject.propose(change, OPEN_SCHEMA, at=T0)
    assert subject.has_seen("cmd-1")
    assert not subject.has_seen("cmd-2")


def test_replaying_the_events_rebuilds_the_same_subject(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    subject.forget_field("supplier", by=Decision(REVIEWER), reason="asked", at=T0)
    copy = None
    for event in subject.collect_events():
        copy = event.mutate(copy)
    assert isinstance(copy, Subject)
    assert copy.__dict__ == subject.__dict__
    assert MODEL.kind is ActorKind.MODEL


def test_a_proposal_cannot_be_based_on_a_future_version(subject: Subject) -> None:
    with pytest.raises(InvalidOperationError):
        subject.propose(proposal(based_on=3), OPEN_SCHEMA, at=T0)


def test_an_erased_subject_takes_no_more_commands(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    pending = proposal("city", TextValue("Lyon"), origin=Origin.INFERRED, based_on=1)
    subject.propose(pending, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    subject.erase(by=Decision(SUBJECT_ACTOR), reason="asked", at=T0)
    (event,) = subject.collect_events()
    assert isinstance(event, SubjectErased)
    assert event.fields == ["city", "supplier"]
    assert subject.fields == {}
    assert subject.change(pending.change_id).status is ChangeStatus.FORGOTTEN
    with pytest.raises(SubjectErasedError):
        subject.record_session(session("s9", "hello"), at=T0, fingerprint_key=FINGERPRINT_KEY)
    with pytest.raises(SubjectErasedError):
        subject.erase(by=Decision(SUBJECT_ACTOR), reason="again", at=T0)
