"""Commands -> the domain records the Subject checks: shared by the ledger's single commands and
by `Ledger.end_session`, which records a session and its proposals in one save."""

from __future__ import annotations

from typing import cast

from factledger.application.ledger.commands import ProposeChange, RecordSession
from factledger.domain.proposal import Proposal
from factledger.domain.sessions import SessionRecord
from factledger.domain.values import JsonObject


def session_record(cmd: RecordSession) -> SessionRecord:
    return SessionRecord(
        session_id=cmd.session_id,
        channel=cmd.channel,
        started_at=cmd.started_at,
        ended_at=cmd.ended_at,
        transcript=tuple(cmd.transcript),
        summary=None if cmd.summary is None else cast("JsonObject", dict(cmd.summary)),
        withheld_count=cmd.withheld_count,
        conversation_type=cmd.conversation_type,
    )


def proposal_of(cmd: ProposeChange) -> Proposal:
    return Proposal(
        change_id=cmd.change_id,
        field=cmd.field,
        operation=cmd.operation,
        value=cmd.value,
        origin=cmd.origin,
        proposed_by=cmd.proposed_by,
        based_on_version=cmd.based_on_version,
        evidence=cmd.evidence,
        condition=cmd.condition,
        rationale=cmd.rationale,
        command_id=cmd.command_id,
    )
