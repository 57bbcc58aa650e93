"""A field's expiry is an event of the subject: recorded once per time, with a time zone, only
for a field the profile holds, and cleared by the field's next confirmed change."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from factledger.domain.errors import (
    FieldNotHeldError,
    InvalidOperationError,
    InvalidValueError,
    SubjectErasedError,
)
from factledger.domain.events import FieldExpirySet
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import T0, approve, proposal

BY = Decision(by=Actor(ActorKind.STAFF, "ops-1"))
UNTIL = T0 + timedelta(days=30)


def test_an_expiry_is_recorded_once_per_time_and_kept_on_the_field(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    subject.collect_events()

    subject.expire_field("supplier", UNTIL, by=BY, at=T0, reason="contract ends")
    subject.expire_field("supplier", UNTIL, by=BY, at=T0)
    subject.expire_field("supplier", UNTIL + timedelta(days=1), by=BY, at=T0)

    events = [e for e in subject.collect_events() if isinstance(e, FieldExpirySet)]
    assert [(e.field, e.valid_until, e.reason) for e in events] == [
        ("supplier", UNTIL, "contract ends"),
        ("supplier", UNTIL + timedelta(days=1), None),
    ]
    assert events[0].TOPIC == "factledger.subject.field_expiry_set.v1"
    assert subject.fields["supplier"].valid_until == UNTIL + timedelta(days=1)
    assert subject.fields["supplier"].value == TextValue("Supplier A")


def test_a_replayed_subject_keeps_the_expiry(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    subject.expire_field("supplier", UNTIL, by=BY, at=T0)

    replayed = None
    for event in subject.collect_events():
        replayed = event.mutate(replayed)

    assert isinstance(replayed, Subject)
    assert replayed.fields["supplier"].valid_until == UNTIL


def test_a_field_the_profile_does_not_hold_cannot_expire(subject: Subject) -> None:
    with pytest.raises(FieldNotHeldError):
        subject.expire_field("supplier", UNTIL, by=BY, at=T0)


def test_a_forgotten_field_cannot_expire(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    subject.forget_field("supplier", by=BY, reason="asked", at=T0)
    with pytest.raises(FieldNotHeldError):
        subject.expire_field("supplier", UNTIL, by=BY, at=T0)


def test_an_expiry_needs_a_time_zone_and_a_short_reason(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    with pytest.raises(InvalidOperationError):
        subject.expire_field("supplier", datetime(2026, 6, 1), by=BY, at=T0)
    with pytest.raises(InvalidValueError):
        subject.expire_field("supplier", UNTIL, by=BY, at=T0, reason="x" * 501)


def test_an_erased_subject_takes_no_expiry(with_supplier: tuple[Subject, Proposal]) -> None:
    subject, _ = with_supplier
    subject.erase(by=BY, reason="asked", at=T0)
    with pytest.raises(SubjectErasedError):
        subject.expire_field("supplier", UNTIL, by=BY, at=T0)


def test_a_later_confirmed_change_clears_the_expiry(
    with_supplier: tuple[Subject, Proposal],
) -> None:
    subject, _ = with_supplier
    subject.expire_field("supplier", UNTIL, by=BY, at=T0)

    change = proposal(value=TextValue("Supplier A"), based_on=subject.profile_version)
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)

    assert subject.fields["supplier"].valid_until is None
