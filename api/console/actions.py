"""The console's commands: the same ledger commands, with the same actors, as the API's routes.

A reviewer's approval is `ApproveChange(reviewer_id=<token sub>)`, a rejection and a forget
carry `actor_of(principal)` (`staff:<sub>`), exactly as `api.http.routes` builds them, so the
events do not tell the console from the API. Each form carries a nonce; the command id is
hashed from it with the tenant, principal and subject (as the API hashes its idempotency
keys), so a form submitted twice decides once.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from uuid import UUID

from factledger.api.console.session import ConsoleSession
from factledger.api.http.deps import ApiState, idempotency_store_of
from factledger.api.http.routes.proposals import actor_of
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import (
    ApproveChange,
    CommandResult,
    ForgetField,
    ForgetMemory,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.drawn_from import memory_drawn_from
from factledger.application.sessions.field_screening import screen_reason
from factledger.domain.errors import DomainError

NONCE_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"


def command_id(session: ConsoleSession, subject_id: UUID, nonce: str, *extra: str) -> str:
    parts = (session.tenant, session.principal_id, str(subject_id), "console", nonce, *extra)
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Decision:
    """One reviewer decision on one pending change."""

    subject_id: UUID
    change_id: UUID
    approve: bool
    text: str | None  # the approval's note (optional) or the rejection's reason (required)


def decide(
    ledger: Ledger, session: ConsoleSession, decision: Decision, nonce: str
) -> CommandResult:
    """Approves or rejects (blocking; run it in a thread)."""
    d, tenant = decision, session.tenant
    cid = command_id(session, d.subject_id, nonce, str(d.change_id))
    if d.approve:
        approve = ApproveChange(
            tenant,
            d.subject_id,
            d.change_id,
            reviewer_id=session.principal_id,
            command_id=cid,
            note=d.text or None,
        )
        return ledger.approve_change(approve)
    reject = RejectChange(
        tenant,
        d.subject_id,
        d.change_id,
        rejected_by=actor_of(session.principal),
        reason=d.text or "",
        command_id=cid,
    )
    return ledger.reject_change(reject)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one decision of a bulk action: None when it was applied."""

    decision: Decision
    error_type: str | None
    detail: str | None


async def decide_in(
    state: ApiState, ledger: Ledger, session: ConsoleSession, decision: Decision, nonce: str
) -> CommandResult:
    """`decide`, off the event loop; an approved request to forget also drops the subject's
    saved responses, as the API's routes do."""
    result = await asyncio.to_thread(decide, ledger, session, decision, nonce)
    if result.forgot:
        await idempotency_store_of(state).forget_subject(session.tenant, decision.subject_id)
    return result


async def decide_all(
    state: ApiState,
    ledger: Ledger,
    session: ConsoleSession,
    decisions: list[Decision],
    nonce: str,
) -> list[Outcome]:
    """Every decision in turn; one that breaks a rule (a conflict: the field changed, someone
    decided first) is reported with its error type and the others still go in."""
    outcomes = []
    for d in decisions:
        try:
            await decide_in(state, ledger, session, d, nonce)
        except (DomainError, NotFoundError) as exc:
            outcomes.append(Outcome(d, type(exc).__name__, str(exc)))
        else:
            outcomes.append(Outcome(d, None, None))
    return outcomes


@dataclass(frozen=True, slots=True)
class Forget:
    subject_id: UUID
    field: str | None
    memory_id: str | None
    reason: str
    items: tuple[str, ...] = ()  # of the field's list: only these go (ADR 0160)


async def forget(state: ApiState, session: ConsoleSession, what: Forget, nonce: str) -> None:
    """Forgets a field or a memory, then drops the subject's saved responses, as the API's
    forget route does."""
    await screen_reason(state.require_ports().safety, what.reason)
    ledger = state.require_ports().ledger
    by, tenant = actor_of(session.principal), session.tenant
    cid = command_id(session, what.subject_id, nonce)
    if what.field is not None:
        cmd_f = ForgetField(tenant, what.subject_id, what.field, by, what.reason, cid, what.items)
        await asyncio.to_thread(ledger.forget_field, cmd_f)
    else:
        memory_id = what.memory_id or ""
        subject = await asyncio.to_thread(ledger.subject, tenant, what.subject_id)
        ports = state.require_ports()
        drawn = await memory_drawn_from(ports.backend, what.subject_id, memory_id, subject.sessions)
        cmd_m = ForgetMemory(
            tenant,
            what.subject_id,
            memory_id,
            by,
            what.reason,
            cid,
            evidence_refs=drawn.lines,
            memory_text=drawn.text,
        )
        await asyncio.to_thread(ledger.forget_memory, cmd_m)
    await idempotency_store_of(state).forget_subject(tenant, what.subject_id)
