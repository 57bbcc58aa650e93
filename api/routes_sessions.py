"""Sessions: start, append a message, end (recorded once, with optional summary and proposals).

A session belongs to the subject it was started for; another subject's token gets the same
404 as for a session that does not exist.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Path, Query

from factledger.api.deps import (
    AgentOrService,
    IdempotencyDep,
    LedgerDep,
    SessionBufferDep,
    SessionsDep,
    SubjectIdDep,
)
from factledger.api.routes_proposals import propose, propose_command
from factledger.api.schemas_common import ERRORS
from factledger.api.schemas_sessions import (
    SESSION_ID_PATTERN,
    EndSessionIn,
    EndSessionOut,
    MessageIn,
    MessageOut,
    MessageOutcomeOut,
    SessionOut,
    StartSessionIn,
    TranscriptOut,
)
from factledger.application.ports import SessionBuffer
from factledger.application.session_types import (
    ActiveSession,
    SessionId,
    SessionNotActiveError,
)
from factledger.domain.transcript import Message

router = APIRouter(prefix="/v1/subjects/{subject}", tags=["sessions"], responses=ERRORS)  # type: ignore[arg-type]
SessionPath = Annotated[str, Path(pattern=SESSION_ID_PATTERN)]


def _out(session: ActiveSession) -> SessionOut:
    return SessionOut(
        session_id=session.session_id,
        subject_id=str(session.subject_id),
        channel=session.channel,
        started_at=session.started_at,
        message_count=session.message_count,
        withheld=session.withheld,
    )


async def _owned(buffer: SessionBuffer, session_id: str, subject_id: UUID) -> ActiveSession:
    session = await buffer.get(SessionId(session_id))
    if session is None or session.subject_id != subject_id:
        raise SessionNotActiveError(session_id)
    return session


@router.post("/sessions", status_code=201, summary="Start a session (idempotent by session id)")
async def start(
    body: StartSessionIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
) -> SessionOut:
    session = await sessions.start(subject_id, SessionId(body.session_id), body.channel)
    return _out(session)


@router.post(
    "/sessions/{session_id}/messages",
    summary="Append one message (screened; a withheld message is only counted)",
)
async def append(
    session_id: SessionPath,
    body: MessageIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    buffer: SessionBufferDep,
    idem: IdempotencyDep,
) -> MessageOutcomeOut:
    await _owned(buffer, session_id, subject_id)
    message = Message(role=body.role, text=body.text, at=body.at)

    # The buffer keeps message ids unique per session, so a retry that outlives the saved
    # response (or a claim whose process died) still appends once.
    message_id = body.message_id or idem.command_id

    async def run() -> MessageOutcomeOut:
        outcome = await sessions.add_message(
            SessionId(session_id), message, flagged=body.flagged, message_id=message_id
        )
        return MessageOutcomeOut(
            kept=outcome.kept, index=outcome.index, withheld_total=outcome.withheld_total
        )

    return await idem.run(run, MessageOutcomeOut)


@router.get("/sessions/{session_id}", summary="An active session and its counts")
async def read(
    session_id: SessionPath,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    buffer: SessionBufferDep,
) -> SessionOut:
    return _out(await _owned(buffer, session_id, subject_id))


@router.get("/sessions/{session_id}/messages", summary="The active session's kept messages")
async def messages(
    session_id: SessionPath,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    buffer: SessionBufferDep,
    last: Annotated[int | None, Query(ge=1, le=2000, description="Only the last n.")] = None,
) -> TranscriptOut:
    session = await _owned(buffer, session_id, subject_id)
    kept = await sessions.context(SessionId(session_id), last=last)
    first = session.message_count - len(kept)
    return TranscriptOut(
        session_id=session_id,
        messages=[
            MessageOut(index=first + n, role=m.role, text=m.text, at=m.at)
            for n, m in enumerate(kept)
        ],
    )


@router.post(
    "/sessions/{session_id}/end",
    summary="End a session: record its transcript once, then the proposals it supports",
)
async def end(
    session_id: SessionPath,
    body: EndSessionIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    buffer: SessionBufferDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
) -> EndSessionOut:
    async def run() -> EndSessionOut:
        await _owned(buffer, session_id, subject_id)
        recording = await sessions.end(SessionId(session_id), summary=body.summary)
        proposals = []
        for index, proposal in enumerate(body.proposals):
            key = None if idem.command_id is None else f"{idem.command_id}:{index}"
            cmd = propose_command(principal, subject_id, proposal, key)
            proposals.append(await propose(ledger, cmd))
        return EndSessionOut(
            session_id=session_id,
            subject_id=str(subject_id),
            message_count=len(recording.transcript),
            withheld=recording.withheld,
            proposals=proposals,
        )

    return await idem.run(run, EndSessionOut)
