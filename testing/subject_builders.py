"""Builders of subjects, sessions and proposals for given/when/then tests of the ledger."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.sessions import SessionRecord
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import FieldValue, TextValue

T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
# A subject's session fingerprint key, for tests that record sessions on a bare `Subject`.
FINGERPRINT_KEY = b"f" * 32
MODEL = Actor(ActorKind.MODEL, "extractor-1")
REVIEWER = Actor(ActorKind.STAFF, "rev-7")
SUBJECT_SAYS = "We work with Supplier A at the moment."


def session(session_id: str = "s1", *texts: str) -> SessionRecord:
    lines = texts or (SUBJECT_SAYS,)
    return SessionRecord(
        session_id=session_id,
        channel=Channel.WHATSAPP,
        started_at=T0,
        ended_at=T0,
        transcript=(
            Message(Role.AGENT, "Hello, who do you buy from?"),
            *(Message(Role.SUBJECT, text) for text in lines),
        ),
    )


def proposal(
    field: str = "supplier",
    value: FieldValue | None = None,
    *,
    based_on: int = 0,
    origin: Origin = Origin.STATED,
    evidence: Evidence | None = None,
    operation: Operation = Operation.SET,
    change_id: UUID | None = None,
) -> Proposal:
    if evidence is None and origin is Origin.STATED:
        evidence = Evidence("s1", 1, "Supplier A")
    return Proposal(
        change_id=change_id or uuid4(),
        field=field,
        operation=operation,
        value=TextValue("Supplier A") if value is None and operation is Operation.SET else value,
        origin=origin,
        proposed_by=MODEL,
        based_on_version=based_on,
        evidence=evidence,
    )


def approve(subject: Subject, change: Proposal) -> None:
    subject.confirm(change.change_id, Decision(REVIEWER), at=T0)
