"""A subject with one proposal to approve, and the response a decision renders: what the
tests of responses saved with their events (ADR 0027 on PostgreSQL, ADR 0037 on SQLite)
approve on every store."""

from __future__ import annotations

import uuid

from factledger.application.ledger.commands import (
    ApproveChange,
    CommandResult,
    ProposeChange,
    RegisterSubject,
)
from factledger.application.ledger.idempotency import JsonBody
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.subject import Subject
from factledger.domain.values import TextValue

TENANT = "acme"


def rendered(subject: Subject, result: CommandResult) -> JsonBody:
    return {"version": result.subject_version, "position": result.position}


def proposed(ledger: Ledger) -> tuple[uuid.UUID, uuid.UUID]:
    """A registered subject and the id of its one proposed change."""
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "l-1")).subject_id
    ledger.propose_change(
        ProposeChange(
            tenant=TENANT,
            subject_id=subject_id,
            field="supplier",
            operation=Operation.SET,
            value=TextValue("Acme"),
            origin=Origin.INFERRED,
            proposed_by=Actor(ActorKind.MODEL, "m"),
            based_on_version=0,
        )
    )
    change_id = next(iter(ledger.subject(TENANT, subject_id).changes))
    return subject_id, change_id


def approve(subject_id: uuid.UUID, change_id: uuid.UUID) -> ApproveChange:
    return ApproveChange(TENANT, subject_id, change_id, reviewer_id="r-1", command_id="cmd-1")
