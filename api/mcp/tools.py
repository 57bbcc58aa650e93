"""The MCP tools: each one is a route of the HTTP API called with the principal's own subject.

Every tool takes a strict body (the HTTP API's own request model, plus the path's ids where the
route has any), so an argument the API does not know, such as a `subject` or a `tenant`, is a
422 naming it. The subject is always `me`: the one the token is bound to. Answers
are the HTTP API's response models, which are also the tools' output schemas. Writes hold a
write slot, as on HTTP. Each tool states its behaviour as MCP annotations: reads are read-only,
`forget` is the one destructive tool (the ledger keeps every other change as a new version),
and a write is idempotent where a retry with the same arguments changes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

from fastapi import Response
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from factledger.api.http.auth import Principal
from factledger.api.http.deps import ME, ApiState, checked_subject_id
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.idempotency import Idempotency
from factledger.api.http.routes import forget as forget_route
from factledger.api.http.routes import profile as profile_routes
from factledger.api.http.routes import proposals as proposal_routes
from factledger.api.http.routes import recall as recall_routes
from factledger.api.http.routes import sessions as session_routes
from factledger.api.http.routes.forget import ForgetIn, ForgetOut
from factledger.api.http.schemas.common import SESSION_ID_PATTERN, Strict
from factledger.api.http.schemas.profile import ProfileOut
from factledger.api.http.schemas.proposals import ProposalIn, ProposalOut
from factledger.api.http.schemas.recall import ContextIn, ContextOut, RecallIn, RecallOut
from factledger.api.http.schemas.sessions import (
    EndSessionIn,
    EndSessionOut,
    MessageIn,
    MessageOutcomeOut,
    SessionOut,
    StartSessionIn,
)
from factledger.application.ledger.queries import DEFAULT_CLOCK, Clock
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.short_term import ShortTermMemory

SESSION_ID = Field(pattern=SESSION_ID_PATTERN, examples=["call-2026-01-14-001"])


class RecordMessageIn(MessageIn):
    session_id: str = SESSION_ID


class EndSessionToolIn(EndSessionIn):
    session_id: str = SESSION_ID


class ProfileIn(Strict):
    """The profile now, or at `as_of` on one clock (the HTTP API's query parameters)."""

    as_of: datetime | None = Field(
        default=None, description="An aware ISO timestamp; absent: the current profile."
    )
    clock: Clock = Field(default=DEFAULT_CLOCK, description=profile_routes.CLOCK_HELP)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: who makes it (from the token alone) and the app's state."""

    principal: Principal
    state: ApiState
    arrived_at: float  # `time.monotonic()` when the call reached the server


BodyT = TypeVar("BodyT", bound=BaseModel)


# Every tool acts on the one subject's memory in this service, never on an open world. Only
# `forget` destroys: a confirmed change replaces a field's value, but the ledger keeps the old
# one as a version of the profile.
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(destructive_hint=False, idempotent_hint=False, open_world_hint=False)
ADDS_ONCE = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)
ERASES = ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False)


@dataclass(frozen=True, slots=True)
class Tool(Generic[BodyT]):
    """A tool: its arguments are `arguments`, validated strictly, then handed to `handler`,
    which answers an `answer`."""

    name: str
    title: str
    description: str
    arguments: type[BodyT]
    answer: type[BaseModel]
    handler: Callable[[Call, BodyT], Awaitable[BaseModel]]
    annotations: ToolAnnotations
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
    return await recall_routes.answer_context(body, p, subject, recall, state, call.arrived_at)


async def get_profile(call: Call, body: ProfileIn) -> BaseModel:
    # A tool's answer has no headers: a read served from views a full disk kept behind is
    # logged by the catch-up, not marked in the answer.
    profiles = await profile_routes.get_profiles(call.state, Response())
    subject_id = await _subject(call)
    return await profile_routes.current(
        call.state, call.principal, subject_id, profiles, body.as_of, body.clock
    )


async def recall(call: Call, body: RecallIn) -> BaseModel:
    service = await recall_routes.get_recall(call.state)
    return await recall_routes.checked_recall(
        body, call.principal, ME, service, call.state, call.arrived_at
    )


async def start_session(call: Call, body: StartSessionIn) -> BaseModel:
    subject_id = await _subject(call)
    ledger = call.state.require_ports().ledger
    return await session_routes.start(body, call.principal, subject_id, _sessions(call), ledger)


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
        ports.judge,
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
        ports.idempotency or call.state.idempotency,
    )


async def propose_change(call: Call, body: ProposalIn) -> BaseModel:
    ports = call.state.require_ports()
    subject_id = await _subject(call)
    return await proposal_routes.create(
        body, call.principal, subject_id, ports.ledger, ports.safety, no_key(call)
    )


async def forget(call: Call, body: ForgetIn) -> BaseModel:
    ports = call.state.require_ports()
    subject_id = await _subject(call)
    saved = ports.idempotency or call.state.idempotency
    return await forget_route.forget(
        body,
        call.principal,
        subject_id,
        ports.ledger,
        no_key(call),
        saved,
        ports.backend,
        ports.safety,
    )


TOOLS: tuple[Tool[Any], ...] = (
    Tool(
        "get_context",
        "Get the subject's context",
        "At the start of a call: what to know about the subject (profile, recent sessions, "
        "memories, open changes to confirm), as notes. Answers within its budget; `degraded` "
        "says why an answer is partial.",
        ContextIn,
        ContextOut,
        get_context,
        READS,
        writes=False,
    ),
    Tool(
        "recall",
        "Recall memories",
        "On a turn: memories relevant to `query`, as notes. Answers within its budget, "
        "partial (`degraded`) rather than late.",
        RecallIn,
        RecallOut,
        recall,
        READS,
        writes=False,
    ),
    Tool(
        "get_profile",
        "Get the subject's profile",
        "The subject's confirmed profile, each field with when it was said and when it was "
        "recorded; with `as_of`, the profile at that time on `clock`: `said` (the default) for "
        "what the subject had said by then, `known` for what the profile held then.",
        ProfileIn,
        ProfileOut,
        get_profile,
        READS,
        writes=False,
    ),
    Tool(
        "start_session",
        "Start a session",
        "Start a session (a call or a chat) before recording its messages; idempotent by "
        "session id.",
        StartSessionIn,
        SessionOut,
        start_session,
        ADDS_ONCE,
    ),
    Tool(
        "record_message",
        "Record a message",
        "Record one of your own (the agent's) lines of the session; the subject's words come "
        "from the channel that heard them, not from this tool. To ask the subject about a "
        "pending change, put its id in `asks`: their answer, relayed by the channel, confirms "
        "it only if it is a yes. With `message_id`, a retry is a no-op.",
        RecordMessageIn,
        MessageOutcomeOut,
        record_message,
        ADDS,
    ),
    Tool(
        "end_session",
        "End the session",
        "End the session: its transcript, summary and proposals are recorded at once. "
        "Proposals quoting this session's messages go in `proposals` here.",
        EndSessionToolIn,
        EndSessionOut,
        end_session,
        ADDS_ONCE,
    ),
    Tool(
        "propose_change",
        "Propose a profile change",
        "Propose a change to a profile field; it stays pending until the subject confirms it "
        "or a reviewer approves it. `evidence` must cite a message of an ended session "
        "(end_session records its messages); to propose from the conversation still open, "
        "pass the proposal in end_session's `proposals` instead. With `change_id`, a retry "
        "is a no-op.",
        ProposalIn,
        ProposalOut,
        propose_change,
        ADDS,
    ),
    Tool(
        "forget",
        "Forget a field or a memory",
        "Forget a profile field (`field`) or one memory (`memory_id`): send exactly one of "
        "them. The value becomes unrecoverable.",
        ForgetIn,
        ForgetOut,
        forget,
        ERASES,
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
