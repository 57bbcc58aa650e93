"""Short-term memory: an active session's messages, buffered per turn, recorded once at the end.

- Every message is screened first (the caller's flag, then the `SafetyFilter`); a refused one
  is dropped before the buffer and only counted.
- Ending a session records it in the ledger (one `SessionRecorded`, idempotent by session id)
  and only then clears the buffer, so a crash in between loses nothing: ending again records
  nothing new and clears the buffer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from uuid import UUID

import structlog

from factledger.application.clocks import Clock
from factledger.application.memory.guidance_catalogue import GuidanceCatalogue
from factledger.application.sessions.ports import SafetyFilter, SessionBuffer, SessionRecorder
from factledger.application.sessions.times import check_time
from factledger.application.sessions.types import (
    ActiveSession,
    JsonValue,
    SafetyVerdict,
    SessionId,
    SessionKey,
    SessionNotActiveError,
    SessionRecording,
)
from factledger.domain.text import is_safe_text, scrub
from factledger.domain.transcript import Channel, Message

log = structlog.get_logger(__name__)

_CALLER_FLAG = SafetyVerdict(allowed=False, category="caller_flag")


@dataclass(frozen=True, slots=True)
class SessionPorts:
    buffer: SessionBuffer
    safety: SafetyFilter
    recorder: SessionRecorder
    clock: Clock
    # Which conversation types each tenant's extraction guidance knows; the empty
    # catalogue knows none, so a session naming one is refused.
    guidance: GuidanceCatalogue = field(default_factory=GuidanceCatalogue)


@dataclass(frozen=True, slots=True)
class MessageOutcome:
    """What happened to one message: kept at `index`, or withheld (and never stored)."""

    kept: bool
    index: int | None
    withheld_total: int


class ShortTermMemory:
    """The use cases of an active session: start, add a message, read the context, end."""

    def __init__(self, ports: SessionPorts) -> None:
        self._ports = ports

    async def start(
        self,
        subject_id: UUID,
        session_id: SessionId,
        channel: Channel,
        *,
        started_at: datetime | None = None,
        conversation_type: str | None = None,
        tenant: str = "",
    ) -> ActiveSession:
        """Opens a session (idempotent for the same id, subject, channel and conversation
        type); another subject's session of the same id is another session. `started_at`
        dates it when the conversation began earlier (checked by `times.check_time`); a
        `conversation_type` must be one the `tenant`'s extraction guidance knows."""
        now = self._ports.clock.now()
        if conversation_type is not None:
            self._ports.guidance.check_known(tenant, conversation_type)
        requested = ActiveSession(
            session_id=session_id,
            subject_id=subject_id,
            channel=channel,
            started_at=now if started_at is None else check_time("started_at", started_at, now=now),
            conversation_type=conversation_type,
        )
        session = await self._ports.buffer.open(requested)
        log.info(
            "session.started",
            session_id=session_id,
            subject_id=str(subject_id),
            conversation_type=session.conversation_type,  # a configured slug, not content
        )
        return session

    async def add_message(
        self,
        key: SessionKey,
        message: Message,
        *,
        flagged: bool = False,
        message_id: str | None = None,
    ) -> MessageOutcome:
        """Buffers one message unless the caller flagged it or the safety filter refuses it.

        With a `message_id`, a retried append (on any process) is a no-op that returns the
        first append's index. A message's own time (`at`) must follow the session's start
        and the message before it; without one it is dated now.
        """
        now = self._ports.clock.now()
        if message.at is None:
            message = replace(message, at=now)
        else:
            check_time("at", message.at, now=now, not_before=await self._latest(key))
        verdict = _CALLER_FLAG if flagged else await self._ports.safety.screen(message)
        if not verdict.allowed:
            withheld = await self._ports.buffer.withhold(key)
            # The category is a fixed code; the message itself never reaches a log.
            log.info(
                "session.message_withheld", session_id=key.session_id, category=verdict.category
            )
            return MessageOutcome(kept=False, index=None, withheld_total=withheld)
        index = await self._ports.buffer.append(key, message, message_id=message_id)
        session = await self._require(key)
        return MessageOutcome(kept=True, index=index, withheld_total=session.withheld)

    async def context(self, key: SessionKey, *, last: int | None = None) -> list[Message]:
        """The session's kept messages, oldest first (the `last` n when given)."""
        return await self._ports.buffer.messages(key, last=last)

    async def end(
        self,
        key: SessionKey,
        *,
        summary: Mapping[str, JsonValue] | None = None,
        recorder: SessionRecorder | None = None,
    ) -> SessionRecording:
        """Records the buffer as one `SessionRecorded`, then clears it.

        `recorder` replaces the configured one for this call (e.g. one that records the
        session's proposals in the same save); if it raises, the buffer is kept.
        """
        session = await self._require(key)
        # Scrubbed, not refused: a message buffered before such text was refused at the door
        # must not make its session impossible to end.
        transcript = tuple(_scrubbed(m) for m in await self._ports.buffer.messages(key))
        recording = SessionRecording(
            subject_id=session.subject_id,
            session_id=session.session_id,
            channel=session.channel,
            started_at=session.started_at,
            ended_at=self._ports.clock.now(),
            transcript=transcript,
            withheld=session.withheld,
            summary=summary,
            conversation_type=session.conversation_type,
        )
        await (recorder or self._ports.recorder).record_session(recording)
        await self._ports.buffer.discard(key)
        log.info(
            "session.ended",
            session_id=key.session_id,
            subject_id=str(session.subject_id),
            message_count=len(transcript),
            withheld=session.withheld,
        )
        return recording

    async def _latest(self, key: SessionKey) -> datetime:
        """The time no new message may precede: the last message's, else the start's."""
        session = await self._require(key)
        last = await self._ports.buffer.messages(key, last=1)
        times = [session.started_at, *(m.at for m in last if m.at is not None)]
        return max(times)

    async def _require(self, key: SessionKey) -> ActiveSession:
        session = await self._ports.buffer.get(key)
        if session is None:
            raise SessionNotActiveError(key.session_id)
        return session


def _scrubbed(message: Message) -> Message:
    return message if is_safe_text(message.text) else replace(message, text=scrub(message.text))
