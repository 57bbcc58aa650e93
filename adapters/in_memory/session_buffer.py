"""`SessionBuffer` in process memory: for development and tests (lost on restart)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from uuid import UUID

from factledger.application.sessions.types import (
    ActiveSession,
    SessionKey,
    SessionNotActiveError,
)
from factledger.domain.errors import SessionConflictError
from factledger.domain.sessions import MAX_MESSAGES, session_full
from factledger.domain.transcript import Message


class InMemorySessionBuffer:
    """Active sessions and their messages in dicts keyed by session key, under one lock."""

    def __init__(self, *, max_messages: int = MAX_MESSAGES) -> None:
        self._max_messages = max_messages
        self._sessions: dict[SessionKey, ActiveSession] = {}
        self._messages: dict[SessionKey, list[Message]] = {}
        self._indexes: dict[SessionKey, dict[str, int]] = {}  # message id -> index
        self._lock = asyncio.Lock()

    async def open(self, session: ActiveSession) -> ActiveSession:
        """Opens the session, or returns the one already open with the same parameters."""
        key = session.key
        async with self._lock:
            existing = self._sessions.get(key)
            if existing is None:
                stored = replace(session, message_count=0, withheld=0)
                self._sessions[key] = stored
                self._messages[key] = []
                return stored
            if existing.channel != session.channel:
                raise SessionConflictError(f"session {session.session_id}: open on another channel")
            if existing.conversation_type != session.conversation_type:
                raise SessionConflictError(
                    f"session {session.session_id}: open with another conversation type"
                )
            return existing

    async def get(self, key: SessionKey) -> ActiveSession | None:
        """The open session, or None."""
        return self._sessions.get(key)

    async def append(
        self, key: SessionKey, message: Message, *, message_id: str | None = None
    ) -> int:
        """Appends a message and returns its index (the first one's, for a known message id);
        a session already holding `max_messages` raises `SessionFullError`."""
        async with self._lock:
            session = self._require(key)
            indexes = self._indexes.setdefault(key, {})
            if message_id is not None and message_id in indexes:
                return indexes[message_id]
            if session.message_count >= self._max_messages:
                raise session_full(key.session_id, self._max_messages)
            if message_id is not None:
                indexes[message_id] = session.message_count
            self._messages[key].append(message)
            self._sessions[key] = replace(session, message_count=session.message_count + 1)
            return session.message_count

    async def withhold(self, key: SessionKey) -> int:
        """Counts one withheld message and returns the new count."""
        async with self._lock:
            session = self._require(key)
            self._sessions[key] = replace(session, withheld=session.withheld + 1)
            return session.withheld + 1

    async def messages(self, key: SessionKey, *, last: int | None = None) -> list[Message]:
        """The kept messages, oldest first."""
        self._require(key)
        kept = self._messages[key]
        return list(kept if last is None else kept[-last:] if last > 0 else [])

    async def discard(self, key: SessionKey) -> None:
        """Forgets the session; a no-op when it is not open."""
        async with self._lock:
            self._sessions.pop(key, None)
            self._messages.pop(key, None)
            self._indexes.pop(key, None)

    async def discard_subject(self, subject_id: UUID) -> int:
        """Forgets every session of the subject."""
        async with self._lock:
            keys = [key for key in self._sessions if key.subject_id == subject_id]
            for key in keys:
                self._sessions.pop(key, None)
                self._messages.pop(key, None)
                self._indexes.pop(key, None)
            return len(keys)

    def _require(self, key: SessionKey) -> ActiveSession:
        session = self._sessions.get(key)
        if session is None:
            raise SessionNotActiveError(key.session_id)
        return session
