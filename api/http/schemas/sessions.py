"""Shapes of the session endpoints: start, append a message, end with summary and proposals."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import SESSION_ID_PATTERN, SafeJson, SafeText, Strict
from factledger.api.http.schemas.proposals import ProposalIn, ProposalOut
from factledger.domain.transcript import MAX_MESSAGE_CHARS, Channel, Role


class StartSessionIn(Strict):
    """The caller names the session, so a retried start is a no-op."""

    session_id: str = Field(pattern=SESSION_ID_PATTERN, examples=["wa-2026-01-14-001"])
    channel: Channel = Field(examples=["whatsapp"])
    started_at: datetime | None = Field(
        default=None,
        description="When the conversation began (timezone-aware, not in the future); "
        "defaults to now. Notes and the session index are dated by it.",
    )
    conversation_type: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_]{0,62}$",
        examples=["sales_discovery"],
        description="What kind of conversation this is (`sales_discovery`, `support_ticket`, "
        "or one the deployment configures for the tenant): it picks the extraction guidance "
        "the product reads the session with. Unknown to the tenant: 422.",
    )


class SessionOut(BaseModel):
    session_id: str
    subject_id: str
    channel: Channel
    started_at: datetime
    message_count: int
    withheld: int
    conversation_type: str | None = None


class MessageIn(Strict):
    """One message; `flagged` lets the caller withhold it (never stored, only counted).

    The subject's lines come from the channel that heard them (a service token), never from
    an agent's token. An agent's line may ask about one pending change (`asks`); the subject's
    next line is then judged as the answer: a yes confirms that change, a no declines it,
    anything else leaves it pending. `confirms` / `declines` on a subject's line state what
    the caller heard; they are refused unless the line answers the question about that change
    as they say.

    `message_id` (unique within the session) makes a retried append a no-op on any process;
    without it, the request's `Idempotency-Key` serves as the message id.
    """

    role: Role = Field(examples=["subject"])
    text: SafeText = Field(
        min_length=1, max_length=MAX_MESSAGE_CHARS, examples=["We work with Supplier A."]
    )
    at: datetime | None = Field(
        default=None,
        description="When it was said (timezone-aware, not in the future, not before the "
        "session's start or the previous message); defaults to now.",
    )
    flagged: bool = False
    message_id: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9._:-]{1,128}$", examples=["wa-msg-0001"]
    )
    confirms: UUID | None = Field(
        default=None,
        description="A pending change (from `context`'s to_confirm) the subject confirms in "
        "this message, answering the agent's line that asked about it (`asks`); refused "
        "unless the message is a yes. Recorded with the session, this message as evidence.",
    )
    declines: UUID | None = Field(
        default=None, description="A pending change the subject declines in this message."
    )
    asks: UUID | None = Field(
        default=None,
        description="An agent's line: the pending change (from `context`'s to_confirm) this "
        "line asks the subject about; the subject's next line is judged as the answer.",
    )


class MessageOutcomeOut(BaseModel):
    kept: bool
    index: int | None = Field(description="The message's index in the transcript, when kept.")
    withheld_total: int


class MessageOut(BaseModel):
    index: int
    role: Role
    text: str
    at: datetime | None


class TranscriptOut(BaseModel):
    session_id: str
    messages: list[MessageOut] = Field(description="Kept messages, oldest first.")


class EndSessionIn(Strict):
    """Ends the session: the transcript is recorded once; proposals may quote it."""

    summary: dict[SafeText, SafeJson] | None = Field(
        default=None, examples=[{"topic": "suppliers", "next_step": "call in March"}]
    )
    proposals: list[ProposalIn] = Field(default_factory=list, max_length=50)


class EndSessionOut(BaseModel):
    session_id: str
    subject_id: str
    message_count: int
    withheld: int
    proposals: list[ProposalOut]
    decided: list[ProposalOut] = Field(
        default_factory=list,
        description="The changes the subject's messages confirmed or declined, as they stand "
        "now (one decided meanwhile by a reviewer keeps that decision).",
    )
