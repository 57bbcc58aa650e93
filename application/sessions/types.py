"""Value types and errors of short-term memory: active sessions and the safety screen."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NewType
from uuid import UUID

from factledger.application.errors import NotFoundError, StoreUnavailableError
from factledger.application.ledger.commands import RecordSession
from factledger.domain.transcript import Channel, Message

SessionId = NewType("SessionId", str)
JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Which session: the caller's id within one subject.

    Session ids are the caller's and unique only per subject, so one subject's use of an id
    is invisible to every other subject; a subject belongs to one tenant, so it is invisible
    across tenants too.
    """

    subject_id: UUID
    session_id: SessionId


@dataclass(frozen=True, slots=True)
class ActiveSession:
    """One open session of a subject, as the short-term buffer keeps it.

    - `message_count` counts the messages kept; `withheld` counts the ones a safety check
      dropped (their content is never stored anywhere).
    """

    session_id: SessionId
    subject_id: UUID
    channel: Channel
    started_at: datetime
    message_count: int = 0
    withheld: int = 0
    conversation_type: str | None = None  # picks the extraction guidance

    @property
    def key(self) -> SessionKey:
        return SessionKey(self.subject_id, self.session_id)


@dataclass(frozen=True, slots=True)
class SafetyVerdict:
    """The outcome of screening one message; `category` is a fixed code, never content."""

    allowed: bool
    category: str | None = None


ALLOWED = SafetyVerdict(allowed=True)


@dataclass(frozen=True, slots=True)
class SessionRecording:
    """Everything the ledger needs to record one ended session as `SessionRecorded`."""

    subject_id: UUID
    session_id: SessionId
    channel: Channel
    started_at: datetime
    ended_at: datetime
    transcript: tuple[Message, ...]
    withheld: int
    summary: Mapping[str, JsonValue] | None = None
    conversation_type: str | None = None

    def command(self, tenant: str) -> RecordSession:
        return RecordSession(
            tenant=tenant,
            subject_id=self.subject_id,
            session_id=self.session_id,
            channel=self.channel,
            started_at=self.started_at,
            ended_at=self.ended_at,
            transcript=self.transcript,
            summary=self.summary,
            withheld_count=self.withheld,
            conversation_type=self.conversation_type,
        )


class SessionNotActiveError(NotFoundError):
    """No active session has this id (never opened, or already ended)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} is not active")
        self.session_id = session_id


class SessionBufferUnavailableError(StoreUnavailableError):
    """The short-term buffer's store failed; the driver error is kept as `__cause__`."""
