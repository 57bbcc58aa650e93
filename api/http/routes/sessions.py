"""Sessions: start, append a message, end (recorded once, with optional summary and proposals).

Retries are safe on any process: an append carries a message id (the caller's, else the
`Idempotency-Key`), and an end records the transcript and its proposals in one ledger save,
so a retried end finds them recorded and answers with them.

A session id is the caller's and names a session only within its subject: another subject
(of this tenant or another) may use the same id for its own session, and sees the same 404 as
for a session that does not exist when it names one it has not started.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Path, Query

from factledger.api.http.auth import Principal
from factledger.api.http.auth import Role as PrincipalRole
from factledger.api.http.deps import (
    AgentOrService,
    IdempotencyDep,
    IdempotencyStoreDep,
    JudgeDep,
    LedgerDep,
    SafetyDep,
    SessionBufferDep,
    SessionsDep,
    SubjectIdDep,
)
from factledger.api.http.errors import (
    InvalidParameterError,
    PermissionDeniedError,
    ServiceUnavailableError,
)
from factledger.api.http.routes.proposals import actor_of, proposal_out, propose_command
from factledger.api.http.schemas.common import ERRORS, SESSION_ID_PATTERN
from factledger.api.http.schemas.sessions import (
    EndSessionIn,
    EndSessionOut,
    MessageIn,
    MessageOut,
    MessageOutcomeOut,
    SessionOut,
    StartSessionIn,
    TranscriptOut,
)
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import CommandResult
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.answers import (
    AnswerMismatchError,
    JudgeUnavailableError,
    judged_decision,
    question_before,
)
from factledger.application.sessions.decisions import check_decidable
from factledger.application.sessions.end import (
    ProposalsRecorder,
    RecordedEnd,
    decided_in,
    recorded_end,
)
from factledger.application.sessions.field_screening import end_fields, screen_fields
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.types import (
    ActiveSession,
    SessionId,
    SessionKey,
    SessionNotActiveError,
)
from factledger.domain.errors import SubjectErasedError
from factledger.domain.sessions import MAX_MESSAGES
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message, MessageDecision, Role, Verdict

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
        conversation_type=session.conversation_type,
    )


async def _owned(buffer: SessionBuffer, key: SessionKey) -> ActiveSession:
    session = await buffer.get(key)
    if session is None:
        raise SessionNotActiveError(key.session_id)
    return session


async def refuse_erased(ledger: Ledger, tenant: str, subject_id: UUID) -> None:
    """410 for an erased subject: its sessions went with it (the erasure discards their
    buffers), and it takes no new ones. An unknown subject is left to the session's own
    checks, as before."""
    try:
        subject = await asyncio.to_thread(ledger.subject, tenant, subject_id)
    except NotFoundError:
        return
    if subject.erased:
        raise SubjectErasedError(f"subject {subject_id}")


@asynccontextmanager
async def erased_if_gone(ledger: Ledger, tenant: str, subject_id: UUID) -> AsyncIterator[None]:
    """A session that is not active may have gone with its subject's erasure: say so (410)
    rather than 404. The ledger is read only then, so appends cost no extra read."""
    try:
        yield
    except SessionNotActiveError:
        await refuse_erased(ledger, tenant, subject_id)
        raise


@router.post("/sessions", status_code=201, summary="Start a session (idempotent by session id)")
async def start(
    body: StartSessionIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    ledger: LedgerDep,
) -> SessionOut:
    await refuse_erased(ledger, principal.tenant, subject_id)
    session = await sessions.start(
        subject_id,
        SessionId(body.session_id),
        body.channel,
        started_at=body.started_at,
        conversation_type=body.conversation_type,
        tenant=principal.tenant,
    )
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
    ledger: LedgerDep,
    idem: IdempotencyDep,
    judge: JudgeDep,
) -> MessageOutcomeOut:
    """The subject's lines come from the channel (a service token), an agent's token appends
    the agent's lines. An agent's line may ask about a pending change (`asks`): the subject's
    next line is judged as the answer, and a yes confirms that change, a no declines it,
    recorded when the session ends with that line as evidence."""
    check_relay(principal, body.role)
    key = SessionKey(subject_id, SessionId(session_id))
    tenant = principal.tenant
    stated = _stated(body)
    if stated is not None or body.role is Role.SUBJECT:
        # A plain append needs no read first: the buffer refuses a session that is not
        # active in the same transaction as the append.
        async with erased_if_gone(ledger, tenant, subject_id):
            await _owned(buffer, key)
    decides = stated
    if body.role is Role.SUBJECT:
        question = question_before(await _before(buffer, key, body.role, body.text))
        try:
            decides = await judged_decision(judge, question, body.text, stated)
        except AnswerMismatchError as exc:
            raise InvalidParameterError(exc.field, exc.detail) from exc
        except JudgeUnavailableError as exc:
            raise ServiceUnavailableError(
                "confirms: the answer classifier is unavailable, so no conversation confirms "
                "a change now; append the line without `confirms`"
            ) from exc
    if decides is not None:
        await asyncio.to_thread(check_decidable, ledger, tenant, subject_id, decides.change_id)
    # The subject's line keeps who relayed it: a decision in it records the relay beside
    # the subject's words.
    relay = actor_of(principal) if body.role is Role.SUBJECT else None
    message = Message(role=body.role, text=body.text, at=body.at, decides=decides, relayed_by=relay)

    # The buffer keeps message ids unique per session, so a retry that outlives the saved
    # response (or a claim whose process died) still appends once.
    message_id = body.message_id or idem.command_id

    async def run() -> MessageOutcomeOut:
        async with erased_if_gone(ledger, tenant, subject_id):
            outcome = await sessions.add_message(
                key, message, flagged=body.flagged, message_id=message_id
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
    ledger: LedgerDep,
) -> SessionOut:
    async with erased_if_gone(ledger, principal.tenant, subject_id):
        return _out(await _owned(buffer, SessionKey(subject_id, SessionId(session_id))))


@router.get("/sessions/{session_id}/messages", summary="The active session's kept messages")
async def messages(
    session_id: SessionPath,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    buffer: SessionBufferDep,
    ledger: LedgerDep,
    last: Annotated[
        int | None, Query(ge=1, le=MAX_MESSAGES, description="Only the last n.")
    ] = None,
) -> TranscriptOut:
    key = SessionKey(subject_id, SessionId(session_id))
    async with erased_if_gone(ledger, principal.tenant, subject_id):
        session = await _owned(buffer, key)
    kept = await sessions.context(key, last=last)
    first = session.message_count - len(kept)
    return TranscriptOut(
        session_id=session_id,
        messages=[
            MessageOut(index=first + n, role=m.role, text=m.text, at=m.at)
            for n, m in enumerate(kept)
        ],
    )


def check_relay(principal: Principal, role: Role) -> None:
    """Only the channel that heard the subject relays their words: an agent's token may write
    the agent's lines, never the subject's (its words would be taken as the subject's own)."""
    if principal.role is PrincipalRole.AGENT and role is Role.SUBJECT:
        raise PermissionDeniedError(
            "role: an agent token may not append the subject's lines; the subject's words "
            "come from the channel that heard them (a service token)"
        )


async def _before(buffer: SessionBuffer, key: SessionKey, role: Role, text: str) -> Message | None:
    """The line the subject's `text` follows. A retried append (the line already kept, by
    its message id) still answers the line before it."""
    lines = await buffer.messages(key, last=2)
    if lines and lines[-1].role is role and lines[-1].text == text:
        lines = lines[:-1]
    return lines[-1] if lines else None


def _stated(body: MessageIn) -> MessageDecision | None:
    """The mark the caller put on the line: a question's (`asks`, on an agent's line) or what
    the caller heard the subject decide (`confirms` / `declines`, on the subject's line)."""
    marks = [
        (name, value)
        for name, value in (
            ("confirms", body.confirms),
            ("declines", body.declines),
            ("asks", body.asks),
        )
        if value is not None
    ]
    if not marks:
        return None
    if len(marks) > 1:
        raise InvalidParameterError(marks[1][0], "a line carries one of confirms, declines, asks")
    name, change_id = marks[0]
    if name == "asks":
        if body.role is not Role.AGENT:
            raise InvalidParameterError("asks", "only the agent's line asks about a change")
        return MessageDecision(Verdict.ASKS, change_id)
    if body.role is not Role.SUBJECT:
        raise InvalidParameterError(name, "only the subject's own message decides on a change")
    return MessageDecision(Verdict(name), change_id)


def end_command_id(tenant: str, subject_id: UUID, session_id: str, index: int) -> str:
    """The ledger command id of an end's n-th proposal: fixed by the session, so every retry
    (with or without an `Idempotency-Key`, on any process) names the same change."""
    parts = (tenant, str(subject_id), "session-end", session_id, str(index))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


@router.post(
    "/sessions/{session_id}/end",
    summary="End a session: record its transcript and the proposals it supports, all or nothing",
)
async def end(
    session_id: SessionPath,
    body: EndSessionIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    sessions: SessionsDep,
    buffer: SessionBufferDep,
    ledger: LedgerDep,
    safety: SafetyDep,
    idem: IdempotencyDep,
    saved: IdempotencyStoreDep,
) -> EndSessionOut:
    """A proposal that breaks a rule, or a summary or proposal field the safety filter
    refuses, is a 4xx that records nothing (the buffer is kept); ending a session that is
    already recorded returns what was recorded, not 404."""
    tenant = principal.tenant
    cmds = [
        propose_command(principal, subject_id, p, end_command_id(tenant, subject_id, session_id, n))
        for n, p in enumerate(body.proposals)
    ]
    await screen_fields(safety, end_fields(body.summary, cmds))
    change_ids = [c.change_id for c in cmds]
    key = SessionKey(subject_id, SessionId(session_id))
    recorder = ProposalsRecorder(ledger, tenant, cmds)

    def render(subject: Subject, result: CommandResult) -> EndSessionOut:
        # Run inside the save, after the recorder was handed the recording.
        recording = recorder.recording
        assert recording is not None  # noqa: S101 - the save follows the hand-over
        done = RecordedEnd(
            subject,
            len(recording.transcript),
            recording.withheld,
            tuple(change_ids),
            decided_in(recording.transcript),
        )
        return _end_out(session_id, done)

    async def run() -> EndSessionOut:
        try:
            await _owned(buffer, key)
        except SessionNotActiveError:
            # Ended before: answer with what was recorded (the ledger is the durable record).
            done = await asyncio.to_thread(
                recorded_end, ledger, tenant, subject_id, session_id, change_ids
            )
            if done is None:
                await refuse_erased(ledger, tenant, subject_id)
                raise
            return _end_out(session_id, done)
        # Still buffered: a fresh end, or one left behind by a process that stopped between
        # the save and the clear, which the ledger's end answers from the same single load.
        recording = await sessions.end(key, summary=body.summary, recorder=recorder)
        subject = recorder.subject
        if subject is None:  # a recorder that saved nothing would have raised
            raise SessionNotActiveError(session_id)
        if recorder.forgot:
            # The subject's words approved a request to forget: saved responses may quote
            # the forgotten words.
            await saved.forget_subject(tenant, subject_id)
        fresh = RecordedEnd(
            subject,
            len(recording.transcript),
            recording.withheld,
            tuple(change_ids),
            decided_in(recording.transcript),
        )
        return _end_out(session_id, fresh)

    return await idem.run(run, EndSessionOut, render=render)


def _end_out(session_id: str, done: RecordedEnd) -> EndSessionOut:
    return EndSessionOut(
        session_id=session_id,
        subject_id=str(done.subject.id),
        message_count=done.message_count,
        withheld=done.withheld,
        proposals=[proposal_out(done.subject, c) for c in done.change_ids],
        decided=[proposal_out(done.subject, c) for c in done.decided if c in done.subject.changes],
    )
