"""The MCP tools: each one is a route of the HTTP API called with the principal's own subject.

Every tool takes a strict body (the HTTP API's own request model, plus the path's ids where the
route has any), so an argument the API does not know, such as a `subject` or a `tenant`, is a
422 naming it. The subject is always `me`: the one the token is bound to (ADR 0010). Answers
are the HTTP API's response models. Writes hold a write slot, as on HTTP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from uuid import UUID

from fastapi import Response
from pydantic import BaseModel, Field

from factledger.api.http.auth import Principal
from factledger.api.http.deps import ME, ApiState, checked_subject_id
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.idempotency import Idempotency
from factledger.api.http.routes import forget as forget_route
from factledger.api.http.routes import proposals as proposal_routes
from factledger.api.http.routes import recall as recall_routes
from factledger.api.http.routes import sessions as session_routes
from factledger.api.http.routes.forget import ForgetIn
from factledger.api.http.schemas.common import SESSION_ID_PATTERN
from factledger.api.http.schemas.proposals import ConfirmIn, ProposalIn
from factledger.api.http.schemas.recall import ContextIn, RecallIn
from factledger.api.http.schemas.sessions import EndSessionIn, MessageIn, StartSessionIn
from factledger.application.ports import SessionBuffer
from factledger.application.sessions.short_term import ShortTermMemory

SESSION_ID = Field(pattern=SESSION_ID_PATTERN, examples=["call-2026-01-14-001"])


class RecordMessageIn(MessageIn):
    session_id: str = SESSION_ID


class EndSessionToolIn(EndSessionIn):
    session_id: str = SESSION_ID


class ConfirmChangeIn(ConfirmIn):
    change_id: UUID = Field(description="The pending change (from get_context's to_confirm).")


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: who makes it (from the token alone) and the app's state."""

    principal: Principal
    state: ApiState
    arrived_at: float  # `time.monotonic()` when the call reached the server


BodyT = TypeVar("BodyT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Tool(Generic[BodyT]):
    """A tool: its arguments are `arguments`, validated strictly, then handed to `handler`."""

    name: str
    description: str
    arguments: type[BodyT]
    handler: Callable[[Call, BodyT], Awaitable[BaseModel]]
    writes: bool = True

    async def run(self, call: Call, raw: dict[str, Any]) -> BaseModel:
        return await self.handler(call, self.arguments.model_validate(raw))


def no_key(call: Call) -> Idempotency:
    """MCP calls carry no `Idempotency-Key` (retries rely on `message_id` and `change_id`):
    without a scope the store is never consulted and the command runs directly."""
    return Idempotency(call.state.idempotency, None, "", Response())


async def _subject(call: Call) -> UUID:
    ledger = call.state.require_ports().ledger
    return await checked_subject_id(call.principal, ledger, ME)


def _buffer(call: Call) -> SessionBuffer:
    buffer = call.state.require_ports().session_buffer
    if buffer is None:
        raise ServiceUnavailableError("short-term memory is not configured")
    return buffer


def _sessions(call: Call) -> ShortTermMemory:
    sessions = call.state.require_ports().sessions
    if sessions is None:
        raise ServiceUnavailableError("short-term memory is not configured")
    return sessions


async def get_context(call: Call, body: ContextIn) -> BaseModel:
    p, ports, state = call.principal, call.state.require_ports(), call.state
    recall = await recall_routes.get_recall(state)
    budget = recall.budget_s(p.tenant, context=True)
    subject = await recall_routes.check_within_budget(p, ports.ledger, ME, budget, call.arrived_at)
    return await recall_routes.context(body, p, subject, recall, state, call.arrived_at)


async def recall(call: Call, body: RecallIn) -> BaseModel:
    p, ports, state = call.principal, call.state.require_ports(), call.state
    service = await recall_routes.get_recall(state)
    budget = service.budget_s(p.tenant)
    subject = await recall_routes.check_within_budget(p, ports.ledger, ME, budget, call.arrived_at)
    return await recall_routes.recall_turn(body, p, subject, service, state, call.arrived_at)


async def start_session(call: Call, body: StartSessionIn) -> BaseModel:
    subject_id = await _subject(call)
    return await session_routes.start(body, call.principal, subject_id, _sessions(call))


async def record_message(call: Call, body: RecordMessageIn) -> BaseModel:
    ports, buffer = call.state.require_ports(), _buffer(call)
    subject_id = await _subject(call)
    sessions = _sessions(call)
    return await session_routes.append(
        body.session_id,
        body,
        call.principal,
        subject_id,
        sessions,
        buffer,
        ports.ledger,
        no_key(call),
    )


async def end_session(call: Call, body: EndSessionToolIn) -> BaseModel:
    ports, buffer = call.state.require_ports(), _buffer(call)
    subject_id = await _subject(call)
    sessions = _sessions(call)
    return await session_routes.end(
        body.session_id,
        body,
        call.principal,
        subject_id,
        sessions,
        buffer,
        ports.ledger,
        ports.safety,
        no_key(call),
    )


async def propose_change(call: Call, body: ProposalIn) -> BaseModel:
    ports = call.state.require_ports()
    subject_id = await _subject(call)
    return await proposal_routes.create(
        body, call.principal, subject_id, ports.ledger, ports.safety, no_key(call)
    )


async def confirm_change(call: Call, body: ConfirmChangeIn) -> BaseModel:
    ports = call.state.require_ports()
    subject_id = await _subject(call)
    return await proposal_routes.confirm(
        body.change_id, body, call.principal, subject_id, ports.ledger, no_key(call)
    )


async def forget(call: Call, body: ForgetIn) -> BaseModel:
    ports = call.state.require_ports()
    subject_id = await _subject(call)
    saved = ports.idempotency or call.state.idempotency
    return await forget_route.forget(
        body, call.principal, subject_id, ports.ledger, no_key(call), saved
    )


TOOLS: tuple[Tool[Any], ...] = (
    Tool(
        "get_context",
        "At the start of a call: what to know about the subject (profile, recent sessions, "
        "memories, open changes to confirm), as notes. Answers within its budget; `degraded` "
        "says why an answer is partial.",
        ContextIn,
        get_context,
        writes=False,
    ),
    Tool(
        "recall",
        "On a turn: memories relevant to `query`, as notes. Answers within its budget, "
        "partial (`degraded`) rather than late.",
        RecallIn,
        recall,
        writes=False,
    ),
    Tool(
        "start_session",
        "Start a session (a call or a chat) before recording its messages; idempotent by "
        "session id.",
        StartSessionIn,
        start_session,
    ),
    Tool(
        "record_message",
        "Record one message of the session. A subject's message may confirm or decline a "
        "pending change (`confirms`, `declines`).",
        RecordMessageIn,
        record_message,
    ),
    Tool(
        "end_session",
        "End the session: its transcript, summary and proposals are recorded at once.",
        EndSessionToolIn,
        end_session,
    ),
    Tool(
        "propose_change",
        "Propose a change to a profile field; it stays pending until the subject confirms it "
        "or a reviewer approves it.",
        ProposalIn,
        propose_change,
    ),
    Tool(
        "confirm_change",
        "The subject confirmed a pending change: `evidence` names the recorded message in "
        "which they said so, and quotes it.",
        ConfirmChangeIn,
        confirm_change,
    ),
    Tool(
        "forget",
        "Forget a profile field or one memory (exactly one of `field`, `memory_id`).",
        ForgetIn,
        forget,
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
