"""`SessionBuffer` in process memory: for development and tests (lost on restart)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from factledger.application.sessions.types import (
    ActiveSession,
    SessionId,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError
from factledger.domain.transcript import Message


class InMemorySessionBuffer:
    """Active sessions and their messages in dicts, guarded by one asyncio lock."""

    def __init__(self) -> None:
        self._sessions: dict[SessionId, ActiveSession] = {}
        self._messages: dict[SessionId, list[Message]] = {}
        self._indexes: dict[SessionId, dict[str, int]] = {}  # message id -> index
        self._lock = asyncio.Lock()

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""
        async with self._lock:
            existing = self._sessions.get(session.session_id)
            if existing is None:
                stored = replace(session, message_count=0, withheld=0)
                self._sessions[session.session_id] = stored
                self._messages[session.session_id] = []
                return stored
            if (existing.subject_id, existing.channel) != (session.subject_id, session.channel):
                raise SessionConflictError(
                    f"session {session.session_id}: open for another subject or channel"
                )
            return existing

    async def get(self, session_id: SessionId) -> ActiveSession | None:
        """The open session, or None."""
        return self._sessions.get(session_id)

    async def append(
        self, session_id: SessionId, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the first one's, for a known message id)."""
        async with self._lock:
            session = self._require(session_id)
            indexes = self._indexes.setdefault(session_id, {})
            if message_id is not None:
                if message_id in indexes:
                    return indexes[message_id]
                indexes[message_id] = session.message_count
            self._messages[session_id].append(message)
            self._sessions[session_id] = replace(session, message_count=session.message_count + 1)
            return session.message_count

    async def withhold(self, session_id: SessionId) -> int:
        """Counts one withheld message and returns the new count."""
        async with self._lock:
            session = self._require(session_id)
            self._sessions[session_id] = replace(session, withheld=session.withheld + 1)
            return session.withheld + 1

    async def messages(self, session_id: SessionId, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""
        self._require(session_id)
        kept = self._messages[session_id]
        return list(kept if last is None else kept[-last:] if last > 0 else [])

    async def discard(self, session_id: SessionId) -> None:
        """Forgets the session; a no-op when it is not open."""
        async with self._lock:
            self._sessions.pop(session_id, None)
            self._messages.pop(session_id, None)
            self._indexes.pop(session_id, None)

    def _require(self, session_id: SessionId) -> ActiveSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotActiveError(session_id)
        return session
