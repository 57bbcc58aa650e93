"""A copy of a subject (what the library hands a command from its cache) shares the change
records, which are immutable, and never sees a decision taken on another copy."""

from __future__ import annotations

import copy

import pytest

from factledger.domain.proposal import Decision
from factledger.domain.provenance import ChangeStatus
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA
from factledger.testing.subject_builders import REVIEWER, T0, approve, proposal


def test_deciding_on_a_copy_leaves_the_original_as_it_was(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    subject.collect_events()
    cached = subject
    command_copy = copy.deepcopy(cached)
    assert command_copy.changes[change.change_id] is cached.changes[change.change_id]
    approve(command_copy, change)
    assert command_copy.changes[change.change_id].status is ChangeStatus.CONFIRMED
    assert cached.changes[change.change_id].status is ChangeStatus.PENDING
    assert "supplier" not in cached.fields
    assert cached.profile_version == 0


def test_a_rejection_on_one_copy_leaves_the_other_pending(subject: Subject) -> None:
    pending = proposal()
    subject.propose(pending, OPEN_SCHEMA, at=T0)
    before = copy.deepcopy(subject)
    subject.reject(pending.change_id, by=Decision(REVIEWER), reason="not said", at=T0)
    assert before.changes[pending.change_id].status is ChangeStatus.PENDING
    assert subject.changes[pending.change_id].status is ChangeStatus.REJECTED


def test_a_forget_on_one_copy_leaves_the_other_copys_changes_pending(subject: Subject) -> None:
    kept = proposal()
    subject.propose(kept, OPEN_SCHEMA, at=T0)
    approve(subject, kept)
    newer = proposal(based_on=1)
    subject.propose(newer, OPEN_SCHEMA, at=T0)
    before = copy.deepcopy(subject)
    subject.forget_field("supplier", by=Decision(REVIEWER), reason="asked to", at=T0)
    assert subject.changes[newer.change_id].status is ChangeStatus.FORGOTTEN
    assert before.changes[newer.change_id].status is ChangeStatus.PENDING
    assert "supplier" in before.fields


def test_change_records_cannot_be_changed_in_place(subject: Subject) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    record = subject.changes[change.change_id]
    with pytest.raises(AttributeError):
        record.status = ChangeStatus.CONFIRMED  # type: ignore[misc]
