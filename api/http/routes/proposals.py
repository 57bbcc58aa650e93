"""Proposals: propose a change, the subject confirms it, a reviewer approves or rejects it.

The proposer and the decider are always the verified principal; a body never names them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from uuid import UUID, uuid4, uuid5

from fastapi import APIRouter

from factledger.api.http.auth import Principal, Role
from factledger.api.http.deps import (
    AgentOrService,
    IdempotencyDep,
    IdempotencyStoreDep,
    JudgeDep,
    LedgerDep,
    Reviewer,
    SafetyDep,
    SubjectIdDep,
    SubjectReader,
)
from factledger.api.http.errors import (
    InvalidParameterError,
    PermissionDeniedError,
    ServiceUnavailableError,
)
from factledger.api.http.schemas.common import ERRORS, ActorOut, EvidenceOut, to_field_value
from factledger.api.http.schemas.proposals import (
    ApproveIn,
    ConfirmIn,
    DecisionOut,
    ProposalIn,
    ProposalOut,
    RejectIn,
)
from factledger.application.ledger.commands import (
    ApproveChange,
    CommandResult,
    ConfirmChange,
    ProposeChange,
    RejectChange,
    new_command_id,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.answers import (
    AnswerMismatchError,
    JudgeUnavailableError,
    check_answer,
    cited_transcript,
)
from factledger.application.sessions.field_screening import (
    proposal_fields,
    screen_fields,
    screen_reason,
)
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject
from factledger.domain.values import to_payload

# `{subject}` is resolved (and checked against the token) by `SubjectIdDep`.
router = APIRouter(prefix="/v1/subjects/{subject}", tags=["proposals"], responses=ERRORS)  # type: ignore[arg-type]
_CHANGE_IDS = UUID("6b0d7a52-2f0e-4c1a-9d55-0f3f0b7c2a11")
_ACTOR_KIND = {
    Role.AGENT: ActorKind.AGENT,
    Role.SERVICE: ActorKind.SYSTEM,
    Role.REVIEWER: ActorKind.STAFF,
    Role.ADMIN: ActorKind.STAFF,
    Role.ANALYST: ActorKind.STAFF,
}


def actor_of(principal: Principal) -> Actor:
    return Actor(_ACTOR_KIND[principal.role], principal.id)


def proposal_out(subject: Subject, change_id: UUID) -> ProposalOut:
    record = subject.change(change_id)
    p = record.proposal
    return ProposalOut(
        change_id=p.change_id,
        subject_id=subject.id,
        field=p.field,
        operation=p.operation,
        value=None if p.value is None else to_payload(p.value),
        origin=p.origin,
        condition=p.condition,
        status=record.status,
        proposed_by=ActorOut.of(p.proposed_by),
        proposed_at=record.proposed_at,
        based_on_version=p.based_on_version,
        evidence=None
        if p.evidence is None
        else EvidenceOut(
            session_id=p.evidence.session_id,
            message_index=p.evidence.message_index,
            quote=p.evidence.quote,
        ),
        rationale=p.rationale,
        redacted=p.redacted,
        superseded_by=subject.superseded_by.get(change_id),
        agreed_by=[ActorOut.of(a) for a in subject.agreed_by.get(change_id, ())],
        relayed_by=None if record.relayed_by is None else ActorOut.of(record.relayed_by),
    )


def propose_command(
    principal: Principal, subject_id: UUID, body: ProposalIn, command_id: str | None
) -> ProposeChange:
    # Without a caller id, an idempotency key still pins the change id across processes.
    change_id = body.change_id or (
        uuid5(_CHANGE_IDS, command_id) if command_id is not None else uuid4()
    )
    return ProposeChange(
        tenant=principal.tenant,
        subject_id=subject_id,
        field=body.field,
        operation=body.operation,
        value=None if body.value is None else to_field_value(body.value),
        origin=body.origin,
        proposed_by=actor_of(principal),
        based_on_version=body.based_on_version,
        evidence=None if body.evidence is None else body.evidence.to_domain(),
        condition=body.condition,
        rationale=body.rationale,
        change_id=change_id,
        command_id=command_id or new_command_id(),
    )


async def propose(ledger: Ledger, cmd: ProposeChange) -> ProposalOut:
    result = await asyncio.to_thread(ledger.propose_change, cmd)
    return proposal_out(subject_of(result), cmd.change_id)


def subject_of(result: CommandResult) -> Subject:
    """The subject the command left (every ledger command returns it)."""
    if result.subject is None:
        raise RuntimeError("a ledger command returned no subject")
    return result.subject


@router.post(
    "/proposals",
    status_code=201,
    summary="Propose a change to a profile field (stays pending until decided)",
)
async def create(
    body: ProposalIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    safety: SafetyDep,
    idem: IdempotencyDep,
) -> ProposalOut:
    """A value, condition or rationale the safety filter refuses is a 422 naming the field."""
    cmd = propose_command(principal, subject_id, body, idem.command_id)
    await screen_fields(safety, proposal_fields("", cmd))
    return await idem.run(lambda: propose(ledger, cmd), ProposalOut)


def _decided(result: CommandResult, change_id: UUID) -> DecisionOut:
    """The decision as the command's own load of the subject saw it after saving."""
    return decision_of(subject_of(result), change_id, applied=result.applied)


def _decision_render(change_id: UUID) -> Callable[[Subject, CommandResult], DecisionOut]:
    def render(subject: Subject, result: CommandResult) -> DecisionOut:
        return decision_of(subject, change_id, applied=result.applied)

    return render


def decision_of(subject: Subject, change_id: UUID, *, applied: bool) -> DecisionOut:
    change = subject.change(change_id)
    # A confirmation answers the version it created, not the subject's version by now (other
    # decisions may have landed meanwhile); a rejection creates none.
    version = change.confirmed_version
    return DecisionOut(
        change_id=change_id,
        subject_id=subject.id,
        status=change.status,
        profile_version=subject.profile_version if version is None else version,
        applied=applied,
        note=change.note,
    )


@router.post(
    "/proposals/{change_id}/confirm",
    summary="The subject confirmed the change in a conversation (evidence required)",
)
async def confirm(
    change_id: UUID,
    body: ConfirmIn,
    principal: AgentOrService,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    judge: JudgeDep,
) -> DecisionOut:
    """The channel relays the subject's yes (a service token): the cited line must answer the
    agent's question about this change, just before it, and the judge must hear a yes. An
    agent's token never decides for the subject."""
    if principal.role is Role.AGENT:
        raise PermissionDeniedError(
            "an agent token may not relay the subject's confirmation; the channel that heard "
            "it does (a service token), or the agent asks with `asks` and the answer decides"
        )
    evidence = body.evidence.to_domain()
    transcript = await asyncio.to_thread(
        cited_transcript, ledger, principal.tenant, subject_id, change_id, evidence
    )
    if transcript is not None:
        try:
            await check_answer(judge, transcript, evidence.message_index, change_id)
        except AnswerMismatchError as exc:
            raise InvalidParameterError("evidence", exc.detail) from exc
        except JudgeUnavailableError as exc:
            raise ServiceUnavailableError(
                "evidence: the answer classifier is unavailable, so no conversation confirms "
                "a change now"
            ) from exc
    cmd = ConfirmChange(
        principal.tenant,
        subject_id,
        change_id,
        evidence,
        command_id=idem.command_id or new_command_id(),
        relayed_by=actor_of(principal),
    )

    async def run() -> DecisionOut:
        result = await asyncio.to_thread(ledger.confirm_change, cmd)
        return _decided(result, change_id)

    return await idem.run(run, DecisionOut, render=_decision_render(change_id))


@router.post(
    "/proposals/{change_id}/approve",
    summary="A reviewer approves a pending change",
)
async def approve(
    change_id: UUID,
    body: ApproveIn,
    principal: Reviewer,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    saved: IdempotencyStoreDep,
) -> DecisionOut:
    cmd = ApproveChange(
        principal.tenant,
        subject_id,
        change_id,
        reviewer_id=principal.id,
        command_id=idem.command_id or new_command_id(),
        note=body.note,
    )

    async def run() -> DecisionOut:
        result = await asyncio.to_thread(ledger.approve_change, cmd)
        if result.forgot:
            # An approved request to forget: saved responses may quote the forgotten words.
            await saved.forget_subject(principal.tenant, subject_id)
        return _decided(result, change_id)

    return await idem.run(run, DecisionOut, render=_decision_render(change_id))


@router.post(
    "/proposals/{change_id}/reject",
    summary="A reviewer rejects a pending change; it never reaches the profile",
)
async def reject(
    change_id: UUID,
    body: RejectIn,
    principal: Reviewer,
    subject_id: SubjectIdDep,
    ledger: LedgerDep,
    idem: IdempotencyDep,
    safety: SafetyDep,
) -> DecisionOut:
    await screen_reason(safety, body.reason)
    cmd = RejectChange(
        principal.tenant,
        subject_id,
        change_id,
        rejected_by=actor_of(principal),
        reason=body.reason,
        command_id=idem.command_id or new_command_id(),
    )

    async def run() -> DecisionOut:
        result = await asyncio.to_thread(ledger.reject_change, cmd)
        return _decided(result, change_id)

    return await idem.run(run, DecisionOut, render=_decision_render(change_id))


@router.get("/proposals/{change_id}", summary="Read one proposal and its status")
async def read(
    change_id: UUID, principal: SubjectReader, subject_id: SubjectIdDep, ledger: LedgerDep
) -> ProposalOut:
    subject = await asyncio.to_thread(ledger.subject, principal.tenant, subject_id)
    return proposal_out(subject, change_id)
