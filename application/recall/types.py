"""What recall returns: dated notes with their origin, attributed excerpts, a degraded reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

from factledger.domain.transcript import Channel, Role


class Degraded(StrEnum):
    """Why a recall answer is partial. Recall never raises: it says this instead."""

    DISABLED = "disabled"  # memory is turned off for the deployment or tenant
    TIMEOUT = "timeout"  # a lookup was still running at the deadline and was cancelled
    BACKEND_ERROR = "backend_error"  # the memory backend failed
    SOURCE_ERROR = "source_error"  # the ledger's read side failed
    # The request waited so long before recall could start (queueing under load) that too
    # little of its budget was left: answered at once, empty, rather than late.
    OVERLOADED = "overloaded"


class NoteKind(StrEnum):
    PROFILE = "profile"  # a confirmed profile field
    SESSION = "session"  # the summary of a past session
    MEMORY = "memory"  # a fact found in the memory backend
    PROPOSAL = "proposal"  # an open proposal: something to ask the subject, never a fact


@dataclass(frozen=True, slots=True)
class NoteOrigin:
    """Where a note comes from, so an agent (or an auditor) can trace it."""

    kind: NoteKind
    ref: str  # field name, session id, memory id or change id
    session_id: str | None = None
    inferred: bool = False  # a model's conclusion, not the subject's words


@dataclass(frozen=True, slots=True)
class Note:
    """One paraphrased note, dated by the interaction it came from; never a quotation."""

    text: str
    origin: NoteOrigin
    on: date | None = None
    channel: Channel | None = None
    score: float | None = None
    question: str | None = None  # for an open proposal: what to ask the subject (a note too)


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A verbatim transcript line, always shown in quotation marks with its attribution."""

    text: str
    role: Role
    session_id: str
    message_index: int
    on: date | None = None
    channel: Channel | None = None


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The answer to a per-turn recall; `degraded` is None when every lookup finished."""

    notes: tuple[Note, ...] = ()
    excerpts: tuple[Excerpt, ...] = ()
    degraded: Degraded | None = None
    elapsed_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What an agent gets at the start of a session.

    - `profile` holds confirmed fields only; `to_confirm` holds open proposals the agent may
      ask the subject about, which are never facts: neither inferences nor values a later
      statement superseded (`askable`), which stay pending for reviewers.
    """

    profile: tuple[Note, ...] = ()
    recent_sessions: tuple[Note, ...] = ()
    memories: tuple[Note, ...] = ()
    to_confirm: tuple[Note, ...] = ()
    excerpts: tuple[Excerpt, ...] = ()
    degraded: Degraded | None = None
    degraded_lookups: tuple[str, ...] = field(default=())
    elapsed_ms: float = 0.0
