"""Messages of one interaction, as the subject ledger and the memory port both see them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from uuid import UUID

from factledger.domain.provenance import Actor, ActorKind

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


def encode_actor(actor: Actor | None) -> str | None:
    """`kind:id` (a kind holds no colon, so the first one splits it), as stores keep it."""
    return None if actor is None else f"{actor.kind.value}:{actor.id}"


def decode_actor(text: str | None) -> Actor | None:
    if not text:
        return None
    kind, _, actor_id = text.partition(":")
    return Actor(ActorKind(kind), actor_id)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a transcript, kept verbatim; `decides` when the subject confirms or
    declines a pending change in it. `relayed_by` is the principal that put the subject's
    words into the transcript (the channel that heard them): a decision in the line records
    it beside the subject's words. None for lines nobody relayed (agents' own, imports)."""

    role: Role
    text: str
    at: datetime | None = None
    decides: MessageDecision | None = None
    relayed_by: Actor | None = None
    # The line's words were forgotten (its key deleted): `text` is empty, and readers show
    # that a line was here, never what it said.
    forgotten: bool = False
