"""Messages of one interaction, as the subject ledger and the memory port both see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

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


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a transcript, kept verbatim."""

    role: Role
    text: str
    at: datetime | None = None
