"""Messages of one interaction, as the subject ledger and the memory port both see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from uuid import UUID

MAX_MESSAGE_CHARS = 10_000  # one message of a transcript


class Role(StrEnum):
    """Who wrote a message. Only the subject's own words can become stated facts about them."""

    SUBJECT = "subject"
    AGENT = "agent"
    STAFF = "staff"
    SYSTEM = "system"


class Channel(StrEnum):
    """Where an interaction took place; notes shown to agents name it."""

    CHAT = "chat"
    WHATSAPP = "whatsapp"
    VOICE = "voice"
    EMAIL = "email"
    HUMAN = "human"
    SMS = "sms"


class Verdict(StrEnum):
    """What the subject says of a pending change in a message."""

    CONFIRMS = "confirms"
    DECLINES = "declines"
    # The agent's line asks the subject about a pending change: the subject's next line is
    # judged as an answer to it (only an answer to the question about a change decides it).
    ASKS = "asks"


@dataclass(frozen=True, slots=True)
class MessageDecision:
    """A subject's message confirms or declines a pending change: the message is the evidence,
    recorded with the session (see `Subject.record_session`). An agent's line may only ask."""

    verdict: Verdict
    change_id: UUID

    def encode(self) -> str:
        return f"{self.verdict.value}:{self.change_id}"

    @property
    def decides(self) -> bool:
        """Confirms or declines (an agent's question only asks)."""
        return self.verdict is not Verdict.ASKS

    @classmethod
    def decode(cls, text: str | None) -> MessageDecision | None:
        if not text:
            return None
        verdict, _, change_id = text.partition(":")
        return cls(Verdict(verdict), UUID(change_id))


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a transcript, kept verbatim; `decides` when the subject confirms or
    declines a pending change in it."""

    role: Role
    text: str
    at: datetime | None = None
    decides: MessageDecision | None = None
    # The line's words were forgotten (its key deleted): `text` is empty, and readers show
    # that a line was here, never what it said.
    forgotten: bool = False
