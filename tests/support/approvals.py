"""A subject with one proposal to approve, and the response a decision renders: what the
tests of responses saved with their events (ADR 0027 on PostgreSQL, ADR 0037 on SQLite)
approve on every store."""

from __future__ import annotations

import uuid

from support.proposals import inferred

from factledger.application.ledger.commands import ApproveChange, CommandResult, RegisterSubject
from factledger.application.ledger.idempotency import JsonBody
from factledger.application.ledger.ledger import Ledger
from factledger.domain.subject import Subject

TENANT = "acme"


def rendered(subject: Subject, result: CommandResult) -> JsonBody:
    return {"version": result.subject_version, "position": result.position}


def proposed(ledger: Ledger, ref: str = "l-1") -> tuple[uuid.UUID, uuid.UUID]:
    """A registered subject and the id of its one proposed change."""
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", ref)).subject_id
    ledger.propose_change(inferred(subject_id, "supplier", "Acme", tenant=TENANT))
    change_id = next(iter(ledger.subject(TENANT, subject_id).changes))
    return subject_id, change_id


def approve(subject_id: uuid.UUID, change_id: uuid.UUID) -> ApproveChange:
    return ApproveChange(TENANT, subject_id, change_id, reviewer_id="r-1", command_id="cmd-1")
