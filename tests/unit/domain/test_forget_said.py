"""A request to forget what was said (ADR 0174) names the subject's lines it concerns:
approving it forgets those lines, the request's own line and the words deciding it, and
withdraws pending changes quoting them; no field changes. Rejecting it keeps everything."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from factledger.domain.errors import (
    EvidenceNotFoundError,
    InvalidFieldNameError,
    InvalidOperationError,
    UnknownFieldError,
)
from factledger.domain.events import FactForgotten
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import (
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
)
from factledger.domain.said_lines import SAID_LINES, line_ref, parse_line_ref
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, ListValue, ProfileSchema, TextValue, ValueType
from factledger.testing.subject_builders import (
    FINGERPRINT_KEY,
    REVIEWER,
    SUBJECT_SAYS,
    T0,
    proposal,
    session,
)

EX = "My ex and I split up last spring, it was rough."
ASKS = "Please forget what I told you about my ex."
CHANNEL = Actor(ActorKind.SYSTEM, "channel-svc")


def _later(session_id: str, *texts: str, hours: int = 1) -> object:
    recorded = session(session_id, *texts)
    return replace(recorded, started_at=T0 + timedelta(hours=hours), ended_at=None)


def _with_ex(subject: Subject) -> None:
    subject.record_session(_later("s2", EX), at=T0, fingerprint_key=FINGERPRINT_KEY)
    subject.record_session(_later("s3", ASKS, hours=2), at=T0, fingerprint_key=FINGERPRINT_KEY)


def _said_request(subject: Subject, *lines: str) -> Proposal:
    request = proposal(
        SAID_LINES,
        ListValue(lines or (line_ref("s2", 1),)),
        operation=Operation.FORGET_SAID,
        evidence=Evidence("s3", 1, ASKS),
        based_on=subject.profile_version,
    )
    subject.propose(request, OPEN_SCHEMA, at=T0)
    return request


def test_a_request_names_lines_and_takes_nothing_until_decided(subject: Subject) -> None:
    _with_ex(subject)
    request = _said_request(subject)
    record = subject.changes[request.change_id]
    assert record.status is ChangeStatus.PENDING
    assert record.field == SAID_LINES
    assert SAID_LINES not in subject.forget_marks


def test_approving_it_forgets_the_lines_and_confirms_the_request(subject: Subject) -> None:
    _with_ex(subject)
    quoting = proposal(
        "relationship", TextValue("split up"), evidence=Evidence("s2", 1, "split up")
    )
    subject.propose(quoting, OPEN_SCHEMA, at=T0)
    version = subject.profile_version
    request = _said_request(subject)
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)

    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert forgot.field is None
    assert forgot.memory_id is None
    assert forgot.request_id == str(request.change_id)
    assert forgot.profile_version is None
    lines = {(r["session_id"], r["message_index"]) for r in forgot.evidence_refs}
    assert lines == {("s2", 1), ("s3", 1)}  # the line named and the request's own
    assert forgot.withdrawn_changes == [str(quoting.change_id)]
    assert subject.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert subject.changes[request.change_id].decided_by == REVIEWER
    assert subject.changes[quoting.change_id].status is ChangeStatus.FORGOTTEN
    assert subject.forget_marks[SAID_LINES].evidence == frozenset(lines)
    assert subject.profile_version == version  # no field changed


def test_the_subjects_yes_is_forgotten_with_the_lines_and_its_relay_recorded(
    subject: Subject,
) -> None:
    _with_ex(subject)
    request = _said_request(subject)
    yes = "Yes, please do."
    subject.record_session(_later("s4", yes, hours=3), at=T0, fingerprint_key=FINGERPRINT_KEY)
    by = Decision(
        Actor(ActorKind.SUBJECT, str(subject.id)),
        evidence=Evidence("s4", 1, yes),
        relayed_by=CHANNEL,
    )
    subject.confirm(request.change_id, by, at=T0)
    forgot = subject.collect_events()[-1]
    assert isinstance(forgot, FactForgotten)
    assert {"session_id": "s4", "message_index": 1} in forgot.evidence_refs
    assert subject.changes[request.change_id].relayed_by == CHANNEL


def test_rejecting_it_keeps_everything(subject: Subject) -> None:
    _with_ex(subject)
    request = _said_request(subject)
    subject.reject(request.change_id, by=Decision(REVIEWER), reason="not asked", at=T0)
    assert subject.changes[request.change_id].status is ChangeStatus.REJECTED
    assert SAID_LINES not in subject.forget_marks


def test_a_replay_holds_the_same_decision(subject: Subject) -> None:
    _with_ex(subject)
    request = _said_request(subject)
    subject.confirm(request.change_id, Decision(REVIEWER), at=T0)
    events = subject.collect_events()
    replayed = None
    for event in events:
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Subject)
    assert replayed.changes[request.change_id].status is ChangeStatus.CONFIRMED
    assert replayed.forget_marks[SAID_LINES] == subject.forget_marks[SAID_LINES]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (line_ref("s9", 1), EvidenceNotFoundError),  # no such session
        (line_ref("s2", 7), EvidenceNotFoundError),  # no such line
        (line_ref("s2", 0), InvalidOperationError),  # the agent's line
        (line_ref("s3", 1), InvalidOperationError),  # the request itself, not said before it
        ("s2:1", InvalidOperationError),  # not a line reference
    ],
)
def test_a_line_not_said_by_the_subject_before_the_request_is_refused(
    subject: Subject, line: str, error: type[Exception]
) -> None:
    _with_ex(subject)
    with pytest.raises(error):
        _said_request(subject, line)


def test_the_reserved_field_takes_no_other_operation_and_no_kind_declares_it(
    subject: Subject,
) -> None:
    with pytest.raises(InvalidOperationError, match=SAID_LINES):
        subject.propose(proposal(SAID_LINES, TextValue(SUBJECT_SAYS)), OPEN_SCHEMA, at=T0)
    with pytest.raises(InvalidFieldNameError, match=SAID_LINES):
        ProfileSchema({SAID_LINES: ValueType.TEXT})


def test_a_kind_with_a_schema_still_gets_requests_to_forget_what_was_said(
    subject: Subject,
) -> None:
    _with_ex(subject)
    schema = ProfileSchema({"supplier": ValueType.TEXT})
    request = proposal(
        SAID_LINES,
        ListValue((line_ref("s2", 1),)),
        operation=Operation.FORGET_SAID,
        evidence=Evidence("s3", 1, ASKS),
    )
    assert subject.propose(request, schema, at=T0)
    with pytest.raises(UnknownFieldError):
        subject.propose(proposal("relationship", TextValue("x")), schema, at=T0)


def test_the_lines_go_only_by_approving_their_request(subject: Subject) -> None:
    _with_ex(subject)
    _said_request(subject)
    with pytest.raises(InvalidOperationError, match=f"field: {SAID_LINES} is reserved"):
        subject.forget_field(SAID_LINES, by=Decision(REVIEWER), reason="asked", at=T0)


def test_a_line_reference_reads_back_as_its_session_and_index() -> None:
    assert parse_line_ref(line_ref("case-7#s1", 12)) == ("case-7#s1", 12)
