"""Ports of this use case: the roles it needs, as Protocols; adapters implement them.

Each port's docstring states the contract its shared test suite checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol
from uuid import UUID

from factledger.application.sessions.types import (
    ActiveSession,
    SafetyVerdict,
    SessionKey,
    SessionRecording,
)
from factledger.domain.transcript import Message


class SafetyFilter(Protocol):
    """Screens one message before it reaches short-term memory.

    - A message it refuses is dropped by the caller: never buffered, recorded, sent to a
      backend or logged; only the count of withheld messages is kept.
    - The verdict's `category` is a fixed code ("payment_card", "credential", ...), never a
      fragment of the message.
    """

    async def screen(self, message: Message) -> SafetyVerdict: ...


class InstructionDetector(Protocol):
    """How likely each text is an instruction to the AI agent or the system reading the memory
    (to change its rules, role or permissions, reveal its configuration, act for someone)
    rather than something said about the subject's world. A learned classifier, not a phrase
    list: an instruction in other words is still one."""

    async def instruction_p(self, texts: Sequence[str]) -> list[float]: ...


class SecretDetector(Protocol):
    """How likely each text discloses a usable secret (a password, a PIN, a one-time or door
    code, a key, a recovery phrase, a security answer) rather than speaking of one (asking to
    reset a PIN) or giving a number that opens nothing (an order, a booking, a policy). A
    learned classifier, in any language: a secret in other words is still one."""

    async def secret_p(self, texts: Sequence[str]) -> list[float]: ...


class SessionBuffer(Protocol):
    """Short-term memory: the messages of active sessions, in a conventional table.

    - A session is named by its `SessionKey` (subject, session id): two subjects (of one
      tenant or of two) may use the same session id, and neither can see, block or end the
      other's session.
    - `open` is idempotent for the same key, channel and conversation type (returns the
      stored session, conversation type included); the same key with another channel or
      conversation type raises `SessionConflictError`.
    - `append` keeps order and returns the message's index (0, 1, ...); `append`,
      `withhold` and `messages` on an unknown session raise `SessionNotActiveError`.
    - `append(message_id=...)` is idempotent: a message id is unique within its session
      (a unique constraint in the stores), so appending it again adds nothing and returns the
      first append's index, whichever process retried.
    - `append` to a session already holding its cap (`MAX_MESSAGES` of `domain.sessions`
      unless the adapter is built with a smaller one) raises `SessionFullError`, atomically
      with the counter, so a session never grows past what its end can record; a known
      message id still returns its index.
    - `messages(last=n)` returns the n most recent messages, oldest first.
    - `discard` removes the session and its messages; discarding twice is a no-op.
    - `discard_subject` removes every session of a subject and their messages (an erasure),
      including what a write-ahead log or freed pages of the store still hold once it
      returns; it returns how many sessions it removed.
    """

    async def open(self, session: ActiveSession) -> ActiveSession: ...

    async def get(self, key: SessionKey) -> ActiveSession | None: ...

    async def append(
        self, key: SessionKey, message: Message, *, message_id: str | None = None
    ) -> int: ...

    async def withhold(self, key: SessionKey) -> int: ...

    async def messages(self, key: SessionKey, *, last: int | None = None) -> list[Message]: ...

    async def discard(self, key: SessionKey) -> None: ...

    async def discard_subject(self, subject_id: UUID) -> int: ...


class SessionRecorder(Protocol):
    """Records one ended session in the subject's ledger.

    - Idempotent by (subject, session id): recording the same session again is a no-op.
    """

    async def record_session(self, recording: SessionRecording) -> None: ...
