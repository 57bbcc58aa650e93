"""Given a subject, when a model reviews a session or supersedes a change, then events or
a named error."""

from __future__ import annotations

import pytest

from factledger.domain.errors import (
    ChangeNotPendingError,
    EvidenceNotFoundError,
    InvalidOperationError,
)
from factledger.domain.events import ChangeSuperseded, SessionReviewed
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, TextValue
from factledger.testing.subject_builders import MODEL, REVIEWER, T0, approve, proposal


def test_a_newer_pending_change_supersedes_an_older_one_of_its_field(subject: Subject) -> None:
    older, newer = proposal(), proposal(value=TextValue("Supplier B"))
    for change in (older, newer):
        subject.propose(change, OPEN_SCHEMA, at=T0)

    subject.supersede(older.change_id, by=newer.change_id, at=T0)

    event = subject.pending_events[-1]
    assert isinstance(event, ChangeSuperseded)
    assert subject.change(older.change_id).status is ChangeStatus.SUPERSEDED
    assert subject.change(newer.change_id).status is ChangeStatus.PENDING
    replayed = None
    for past in subject.collect_events():
        replayed = past.mutate(replayed)
    assert isinstance(replayed, Subject)
    assert replayed.__dict__ == subject.__dict__


def test_only_a_pending_change_of_the_same_field_can_supersede(subject: Subject) -> None:
    supplier, budget, decided = proposal(), proposal("budget"), proposal()
    for change in (supplier, budget, decided):
        subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, decided)

    with pytest.raises(InvalidOperationError):
        subject.supersede(supplier.change_id, by=budget.change_id, at=T0)
    with pytest.raises(ChangeNotPendingError):
        subject.supersede(decided.change_id, by=supplier.change_id, at=T0)
    with pytest.raises(InvalidOperationError):
        subject.supersede(supplier.change_id, by=supplier.change_id, at=T0)


def test_a_session_is_reviewed_once_by_a_model_and_only_once_recorded(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)

    subject.mark_reviewed("s1", by=MODEL, proposed=[change.change_id], superseded=[], at=T0)
    subject.mark_reviewed(
        "s1", by=Actor(ActorKind.MODEL, "later@2"), proposed=[], superseded=[], at=T0
    )

    reviews = [e for e in subject.pending_events if isinstance(e, SessionReviewed)]
    assert [(e.session_id, e.change_ids) for e in reviews] == [("s1", [str(change.change_id)])]
    assert subject.has_reviewed("s1")
    with pytest.raises(InvalidOperationError):
        subject.mark_reviewed("s1", by=REVIEWER, proposed=[], superseded=[], at=T0)
    with pytest.raises(EvidenceNotFoundError):
        subject.mark_reviewed("s9", by=MODEL, proposed=[], superseded=[], at=T0)
