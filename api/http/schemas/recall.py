"""Shapes of `context` and `recall`: dated notes, attributed excerpts, a degraded reason."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import SafeText, Strict
from factledger.application.recall.types import (
    Excerpt,
    Note,
    RecallResult,
    SessionContext,
)

MAX_QUERY_CHARS = 2000  # a recall query or topic; the memory port takes longer ones too
EXCERPTS_DESCRIPTION = (
    "Verbatim transcript lines behind the notes, attributed; empty unless the tenant's recall "
    "settings opt in (`excerpts: true`). Never mixed into the notes."
)


class ContextIn(Strict):
    topic: SafeText | None = Field(
        default=None, min_length=1, max_length=MAX_QUERY_CHARS, examples=["supplier pricing"]
    )


class RecallIn(Strict):
    query: SafeText = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, examples=["which supplier do they use?"]
    )


class NoteOut(BaseModel):
    text: str = Field(examples=["works with Supplier B, previously Supplier A"])
    kind: str = Field(examples=["memory"])
    ref: str
    session_id: str | None = None
    inferred: bool = False
    on: date | None = None
    channel: str | None = Field(default=None, examples=["voice"])
    score: float | None = None
    question: str | None = Field(
        default=None,
        description="For a proposal to confirm: a suggested question (a note, not a "
        "quotation). Append the subject's answer with `confirms` or `declines` = `ref`.",
    )

    @classmethod
    def of(cls, note: Note) -> NoteOut:
        return cls(
            text=note.text,
            kind=note.origin.kind.value,
            ref=note.origin.ref,
            session_id=note.origin.session_id,
            inferred=note.origin.inferred,
            on=note.on,
            channel=None if note.channel is None else note.channel.value,
            score=note.score,
            question=note.question,
        )


class ExcerptOut(BaseModel):
    """A verbatim transcript line, attributed: who said it, in which session, when."""

    text: str = Field(description="Verbatim; render it in quotation marks, never as a note.")
    role: str = Field(description="Who said it.", examples=["subject"])
    session_id: str
    message_index: int
    on: date | None = None
    channel: str | None = None

    @classmethod
    def of(cls, excerpt: Excerpt) -> ExcerptOut:
        return cls(
            text=excerpt.text,
            role=excerpt.role.value,
            session_id=excerpt.session_id,
            message_index=excerpt.message_index,
            on=excerpt.on,
            channel=None if excerpt.channel is None else excerpt.channel.value,
        )


class RecallOut(BaseModel):
    notes: list[NoteOut]
    excerpts: list[ExcerptOut] = Field(description=EXCERPTS_DESCRIPTION)
    degraded: str | None = Field(description="Why the answer is partial; null when complete.")
    elapsed_ms: float
    prompt: str = Field(description="Ready-to-use rendering for an agent prompt.")

    @classmethod
    def of(cls, result: RecallResult, prompt: str) -> RecallOut:
        return cls(
            notes=[NoteOut.of(n) for n in result.notes],
            excerpts=[ExcerptOut.of(e) for e in result.excerpts],
            degraded=None if result.degraded is None else result.degraded.value,
            elapsed_ms=result.elapsed_ms,
            prompt=prompt,
        )


class ContextOut(BaseModel):
    profile: list[NoteOut]
    recent_sessions: list[NoteOut]
    memories: list[NoteOut]
    to_confirm: list[NoteOut] = Field(description="Open proposals to ask about; never facts.")
    excerpts: list[ExcerptOut] = Field(description=EXCERPTS_DESCRIPTION)
    degraded: str | None
    degraded_lookups: list[str]
    elapsed_ms: float
    prompt: str

    @classmethod
    def of(cls, context: SessionContext, prompt: str) -> ContextOut:
        return cls(
            profile=[NoteOut.of(n) for n in context.profile],
            recent_sessions=[NoteOut.of(n) for n in context.recent_sessions],
            memories=[NoteOut.of(n) for n in context.memories],
            to_confirm=[NoteOut.of(n) for n in context.to_confirm],
            excerpts=[ExcerptOut.of(e) for e in context.excerpts],
            degraded=None if context.degraded is None else context.degraded.value,
            degraded_lookups=list(context.degraded_lookups),
            elapsed_ms=context.elapsed_ms,
            prompt=prompt,
        )
