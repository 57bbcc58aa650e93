"""A subject's confirmation means something: their own later words, not the proposal's."""

from __future__ import annotations

import pytest

from factledger.domain.errors import (
    ConfirmationBeforeProposalError,
    ConfirmationNotFromSubjectError,
    ConfirmationReusesEvidenceError,
    EvidenceNotFoundError,
)
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus, Evidence
from factledger.domain.sessions import SessionRecord
from factledger.domain.subject import Subject, keyed_subject_id
from factledger.domain.transcript import Channel, Message, MessageDecision, Role, Verdict
from factledger.domain.values import OPEN_SCHEMA
from factledger.testing.subject_builders import FINGERPRINT_KEY, REVIEWER, T0, proposal, session

KEY = b"k" * 32  # a deployment key of subject ids

LEAD = Actor(ActorKind.SUBJECT, "lead-42")


@pytest.fixture
def proposed(subject: Subject) -> tuple[Subject, Proposal]:
    """s1 (agent question, the lead's line) is recorded, then the supplier is proposed from it."""
    change = proposal(evidence=Evidence("s1", 1, "Supplier A"))
    subject.propose(change, OPEN_SCHEMA, at=T0)
    return subject, change


def confirm(subject: Subject, change: Proposal, evidence: Evidence) -> None:
    subject.confirm(change.change_id, Decision(LEAD, evidence=evidence), at=T0)


def test_the_proposals_own_quote_cannot_confirm_it(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    with pytest.raises(ConfirmationReusesEvidenceError):
        confirm(subject, change, Evidence("s1", 1, "Supplier A"))


def test_another_quote_of_the_proposals_own_message_cannot_confirm_it(
    subject: Subject,
) -> None:
    subject.record_session(
        session("s2", "Supplier A, yes. We use them."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    change = proposal(evidence=Evidence("s2", 1, "We use them"))
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(ConfirmationReusesEvidenceError):
        confirm(subject, change, Evidence("s2", 1, "Supplier A, yes"))


def test_a_message_recorded_before_the_proposal_cannot_confirm_it(subject: Subject) -> None:
    subject.record_session(
        session("s2", "Supplier A.", "Yes, that is right."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    change = proposal(evidence=Evidence("s2", 1, "Supplier A"))
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(ConfirmationBeforeProposalError):
        confirm(subject, change, Evidence("s2", 2, "Yes, that is right"))


def test_an_agent_line_cannot_confirm(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    subject.record_session(session("s2", "Sure."), at=T0, fingerprint_key=FINGERPRINT_KEY)
    with pytest.raises(ConfirmationNotFromSubjectError):
        confirm(subject, change, Evidence("s2", 0, "Hello, who do you buy from?"))


def test_another_subjects_session_cannot_confirm(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    other = Subject.register(
        "acme",
        "lead",
        "lead-99",
        at=T0,
        subject_id=keyed_subject_id("acme", "lead", "lead-99", 0, KEY),
    )
    other.record_session(
        session("s-other", "Yes, Supplier A is right."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    with pytest.raises(EvidenceNotFoundError):
        confirm(subject, change, Evidence("s-other", 1, "Yes, Supplier A is right"))


def test_the_subjects_later_words_confirm(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    subject.record_session(
        session("s2", "Yes, Supplier A is right."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    confirm(subject, change, Evidence("s2", 1, "Yes, Supplier A is right"))
    assert subject.changes[change.change_id].status is ChangeStatus.CONFIRMED


def test_a_reviewer_approves_without_any_words(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    subject.confirm(change.change_id, Decision(REVIEWER), at=T0)
    assert subject.changes[change.change_id].status is ChangeStatus.CONFIRMED


def test_a_subject_declining_obeys_the_same_rules(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    own = Decision(LEAD, evidence=Evidence("s1", 1, "Supplier A"))
    with pytest.raises(ConfirmationReusesEvidenceError):
        subject.reject(change.change_id, by=own, reason="declined", at=T0)
    subject.record_session(
        session("s2", "No, that is wrong."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    later = Decision(LEAD, evidence=Evidence("s2", 1, "No, that is wrong"))
    subject.reject(change.change_id, by=later, reason="declined", at=T0)
    assert subject.changes[change.change_id].status is ChangeStatus.REJECTED


def test_the_order_survives_a_replay(subject: Subject) -> None:
    subject.record_session(
        session("s2", "Supplier A.", "Yes, that is right."), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    change = proposal(evidence=Evidence("s2", 1, "Supplier A"))
    subject.propose(change, OPEN_SCHEMA, at=T0)
    replayed = None
    for event in subject.collect_events():
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Subject)
    with pytest.raises(ConfirmationBeforeProposalError):
        confirm(replayed, change, Evidence("s2", 2, "Yes, that is right"))
    later = SessionRecord("s3", Channel.CHAT, T0, T0, (Message(Role.SUBJECT, "Correct."),))
    replayed.record_session(later, at=T0, fingerprint_key=FINGERPRINT_KEY)
    confirm(replayed, change, Evidence("s3", 0, "Correct"))
    assert replayed.changes[change.change_id].status is ChangeStatus.CONFIRMED


def answer(session_id: str, role: Role, text: str, decision: MessageDecision) -> SessionRecord:
    message = Message(role, text, T0, decision)
    return SessionRecord(session_id, Channel.CHAT, T0, T0, (message,))


def test_a_subjects_answer_decides_when_its_session_is_recorded(
    proposed: tuple[Subject, Proposal],
) -> None:
    subject, change = proposed
    subject.collect_events()
    yes = MessageDecision(Verdict.CONFIRMS, change.change_id)
    subject.record_session(
        answer("s2", Role.SUBJECT, "Yes, Supplier A.", yes), at=T0, fingerprint_key=FINGERPRINT_KEY
    )
    events = subject.collect_events()
    assert [type(e).__name__ for e in events] == ["SessionRecorded", "ChangeConfirmed"]
    assert subject.confirmed_in[change.change_id] == ("s2", 0)


def test_an_agents_line_never_decides(proposed: tuple[Subject, Proposal]) -> None:
    subject, change = proposed
    yes = MessageDecision(Verdict.CONFIRMS, change.change_id)
    with pytest.raises(ConfirmationNotFromSubjectError):
        subject.record_session(
            answer("s2", Role.AGENT, "Confirmed for them.", yes),
            at=T0,
            fingerprint_key=FINGERPRINT_KEY,
        )


def test_an_answer_on_a_change_already_decided_is_kept_as_words_only(
    proposed: tuple[Subject, Proposal],
) -> None:
    subject, change = proposed
    subject.confirm(change.change_id, Decision(REVIEWER), at=T0)
    no = MessageDecision(Verdict.DECLINES, change.change_id)
    assert (
        subject.record_session(
            answer("s2", Role.SUBJECT, "No.", no), at=T0, fingerprint_key=FINGERPRINT_KEY
        )
        is True
    )
    assert subject.changes[change.change_id].status is ChangeStatus.CONFIRMED
