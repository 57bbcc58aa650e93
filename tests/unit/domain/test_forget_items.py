"""A request to forget some items of a list (ADR 0160): approving it forgets the field's words
as a whole-field forget does, and the next version keeps the items it did not name, standing
as the field stood."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factledger.domain.errors import InvalidOperationError
from factledger.domain.events import FactForgotten
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Evidence, Operation
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, ListValue, TextValue
from factledger.testing.subject_builders import (
    FINGERPRINT_KEY,
    REVIEWER,
    T0,
    approve,
    proposal,
    session,
)

NAMES = "Our competitors are Acme, Vatly and Zorb."
ASKS = "Please take Vatly off whatever notes you have."
OWNER = Actor(ActorKind.SUBJECT, "lead-42")


@pytest.fixture
def competing(subject: Subject) -> tuple[Subject, Proposal]:
    subject.record_session(session("s2", NAMES), at=T0, fingerprint_key=FINGERPRINT_KEY)
    change = replace(
        proposal(
            "competitors",
            ListValue(("Acme", "Vatly", "Zorb")),
            evidence=Evidence("s2", 1, NAMES),
            based_on=subject.profile_version,
        ),
        condition="while they are in the region",
    )
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)
    return subject, change


def _request(subject: Subject, *items: str) -> Proposal:
    subject.record_session(session("s3", ASKS), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(
        "competitors",
        ListValue(items),
        operation=Operation.FORGET,
        evidence=Evidence("s3", 1, ASKS),
        based_on=subject.profile_version,
    )
    subject.propose(request, OPEN_SCHEMA, at=T0)
    return request


def _approved_said(subject: Subject, said: str, operation: Operation, item: str) -> None:
    """The subject says `said` in session s4; a change of `competitors` quoting it, approved."""
    subject.record_session(session("s4", said), at=T0, fingerprint_key=FINGERPRINT_KEY)
    change = proposal(
        "competitors",
        ListValue((item,)),
        operation=operation,
        evidence=Evidence("s4", 1, said),
        based_on=subject.profile_version,
    )
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)


def test_approving_keeps_the_items_it_did_not_name(competing: tuple[Subject, Proposal]) -> None:
    subject, change = competing
    before = subject.fields["competitors"]
    request = _request(subject, "vatly")  # items are told apart by their words, not case
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)

    kept = subject.fields["competitors"]
    assert kept.value == ListValue(("Acme", "Zorb"))
    assert kept.since_version == subject.profile_version == before.since_version + 1
    # Standing as the field stood: who proposed and confirmed it, and when; not its
    # condition, whose words went with the field's.
    assert (kept.origin, kept.change_id, kept.proposed_by, kept.confirmed_by) == (
        before.origin,
        change.change_id,
        before.proposed_by,
        before.confirmed_by,
    )
    assert kept.confirmed_at == before.confirmed_at
    assert kept.condition is None
    assert subject.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert "competitors" in subject.forgotten_fields
    assert subject.key_generation("competitors") == 1

    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert forgot.kept == ["Acme", "Zorb"]
    assert forgot.key_generation == 0
    # The words that named the forgotten item go, as with any forget of the field.
    lines = {(r["session_id"], r["message_index"]) for r in forgot.evidence_refs}
    assert {("s2", 1), ("s3", 1)} <= lines


def test_a_replay_builds_the_kept_field_from_the_forget_alone(
    competing: tuple[Subject, Proposal],
) -> None:
    """Once its keys are gone, the changes that set the list read back without a value: the
    forget's own event carries what the kept items stand on."""
    subject, _ = competing
    request = _request(subject, "Vatly")
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    events = subject.collect_events()
    replayed = None
    for event in events:
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Subject)
    assert replayed.fields == subject.fields

    shredded = None
    for event in events:
        if type(event).__name__ == "ChangeProposed":
            vars(event).update(value=None, evidence=None, condition=None, rationale=None)
        shredded = event.mutate(shredded)
    assert isinstance(shredded, Subject)
    assert shredded.fields["competitors"] == subject.fields["competitors"]


def test_naming_every_item_forgets_the_field(competing: tuple[Subject, Proposal]) -> None:
    subject, _ = competing
    request = _request(subject, "Acme", "Vatly", "Zorb")
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    assert "competitors" not in subject.fields
    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert forgot.kept is None
    assert forgot.kept_standing is None


def test_later_items_build_on_the_kept_ones(competing: tuple[Subject, Proposal]) -> None:
    subject, _ = competing
    request = _request(subject, "Vatly")
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    _approved_said(subject, "We now also compete with Brisk.", Operation.APPEND, "Brisk")
    assert subject.fields["competitors"].value == ListValue(("Acme", "Zorb", "Brisk"))


def test_an_item_removed_meanwhile_keeps_the_rest(competing: tuple[Subject, Proposal]) -> None:
    """Approved after the item left the list, the request still takes the field's words (they
    named it) and keeps what is held now."""
    subject, _ = competing
    request = _request(subject, "Vatly")
    _approved_said(subject, "We no longer compete with Vatly.", Operation.REMOVE, "Vatly")
    subject.confirm(request.change_id, Decision(OWNER, Evidence("s4", 1, "Vatly")), at=T0)
    assert subject.fields["competitors"].value == ListValue(("Acme", "Zorb"))


@pytest.mark.parametrize(
    ("field", "value", "names"),
    [
        ("competitors", ListValue(("Brisk",)), "does not hold Brisk"),
        ("competitors", ListValue(()), "the items of the list to forget"),
        ("competitors", TextValue("Vatly"), "the items of the list to forget"),
        ("supplier", ListValue(("Supplier A",)), "holds no list"),
    ],
)
def test_a_request_naming_what_the_list_does_not_hold_is_refused(
    competing: tuple[Subject, Proposal], field: str, value: ListValue | TextValue, names: str
) -> None:
    subject, _ = competing
    supplier = proposal(based_on=subject.profile_version)
    subject.propose(supplier, OPEN_SCHEMA, at=T0)
    approve(subject, supplier)
    subject.record_session(session("s3", ASKS), at=T0, fingerprint_key=FINGERPRINT_KEY)
    request = proposal(
        field,
        value,
        operation=Operation.FORGET,
        evidence=Evidence("s3", 1, ASKS),
        based_on=subject.profile_version,
    )
    with pytest.raises(InvalidOperationError, match=names):
        subject.propose(request, OPEN_SCHEMA, at=T0)


def test_a_forget_asked_directly_names_the_items_it_takes(
    competing: tuple[Subject, Proposal],
) -> None:
    subject, _ = competing
    subject.forget_items("competitors", ["ZORB"], by=Decision(OWNER), reason="asked", at=T0)
    assert subject.fields["competitors"].value == ListValue(("Acme", "Vatly"))
    with pytest.raises(InvalidOperationError, match="items: competitors does not hold Zorb"):
        subject.forget_items("competitors", ["Zorb"], by=Decision(OWNER), reason="asked", at=T0)
    with pytest.raises(InvalidOperationError, match="items: supplier holds no list"):
        subject.forget_items("supplier", ["A"], by=Decision(OWNER), reason="asked", at=T0)


def test_items_of_a_pending_list_may_be_named_and_the_profile_keeps_what_it_held(
    subject: Subject,
) -> None:
    """A list only proposed: a request may name its items (the reviewer sees what was asked);
    approving it forgets the field's words and withdraws its pending changes, as any forget
    of the field does, and keeps only what the profile held (here nothing)."""
    subject.record_session(session("s2", NAMES), at=T0, fingerprint_key=FINGERPRINT_KEY)
    listed = proposal(
        "competitors",
        ListValue(("Acme", "Vatly", "Zorb")),
        evidence=Evidence("s2", 1, NAMES),
        based_on=subject.profile_version,
    )
    subject.propose(listed, OPEN_SCHEMA, at=T0)
    assert subject.held_items("competitors") == ("Acme", "Vatly", "Zorb")
    request = _request(subject, "Vatly")
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    assert "competitors" not in subject.fields
    assert subject.changes[listed.change_id].status is ChangeStatus.FORGOTTEN
