"""The structured output an LLM extractor must return: JSON schema for the request, pydantic
model for validating the answer, and the guards that map it to `ExtractedFact`s.

The model is not trusted: facts that cite no message of the subject are dropped (an agent's
introduction is never a fact), indexes out of range are dropped, references to unknown keys are
dropped, and a `derives` fact is always an inference. A slot's `value` is kept only when the
note or a cited message of the subject says it: a proposal quotes what was said, never a value
the model made up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

MAX_FACT_CHARS = 500
_QUOTES = re.compile(r"[\"“”«»]")

_NULLABLE_STRING = {"type": ["string", "null"]}
FACTS_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "key",
                    "text",
                    "slot",
                    "source_indexes",
                    "relation",
                    "related_to",
                    "is_inference",
                    "condition",
                    "valid_from",
                    "value",
                    "negated",
                ],
                "properties": {
                    "key": {"type": "string"},
                    "text": {"type": "string"},
                    "slot": _NULLABLE_STRING,
                    "source_indexes": {"type": "array", "items": {"type": "integer"}},
                    "relation": {
                        "type": ["string", "null"],
                        "enum": ["updates", "extends", "derives", None],
                    },
                    "related_to": {"type": "array", "items": {"type": "string"}},
                    "is_inference": {"type": "boolean"},
                    "condition": _NULLABLE_STRING,
                    "valid_from": {**_NULLABLE_STRING, "description": "ISO date, or null"},
                    "value": {
                        **_NULLABLE_STRING,
                        "description": "the slot's value alone, as said; null without a slot",
                    },
                    "negated": {
                        "type": "boolean",
                        "description": "true when the fact says the value no longer holds",
                    },
                },
            },
        }
    },
}


class LlmFact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1)
    slot: str | None = Field(default=None, max_length=100)
    source_indexes: list[int]
    relation: Literal["updates", "extends", "derives"] | None = None
    related_to: list[str] = Field(default_factory=list)
    is_inference: bool = False
    condition: str | None = None
    valid_from: str | None = None
    value: str | None = Field(default=None, max_length=200)
    negated: bool = False


class LlmFacts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: list[LlmFact]


def to_extracted(answer: LlmFacts, request: ExtractionRequest) -> tuple[list[ExtractedFact], int]:
    """The facts that pass the guards, re-keyed "f0", "f1", ...; and how many were dropped."""
    subject = {i for i, m in enumerate(request.transcript) if m.role is Role.SUBJECT}
    known_ids = {k.memory_id for k in request.known}
    kept: list[tuple[LlmFact, tuple[int, ...]]] = []
    for fact in answer.facts:
        sources = tuple(
            sorted({i for i in fact.source_indexes if 0 <= i < len(request.transcript)})
        )
        if _clean(fact.text) and (subject & set(sources) or fact.relation == "derives"):
            kept.append((fact, sources))
    new_keys = {fact.key: f"f{i}" for i, (fact, _) in enumerate(kept)}
    context = _Context(new_keys, known_ids, subject, request.transcript, request.occurred_at.tzinfo)
    out = [_one(fact, sources, context, position) for position, (fact, sources) in enumerate(kept)]
    # A conclusion must rest on facts that survived the guards.
    valid = [f for f in out if f.relation is not RelationKind.DERIVES or f.related_to]
    return valid, len(answer.facts) - len(valid)


@dataclass(frozen=True, slots=True)
class _Context:
    """What every fact of one answer is checked against."""

    new_keys: dict[str, str]
    known_ids: set[str]
    subject: set[int]
    transcript: Sequence[Message]
    tz: tzinfo | None


def _one(
    fact: LlmFact, sources: tuple[int, ...], context: _Context, position: int
) -> ExtractedFact:
    new_keys, subject = context.new_keys, context.subject
    related = tuple(
        new_keys.get(ref, ref)
        for ref in fact.related_to
        if (ref in new_keys and ref != fact.key) or ref in context.known_ids
    )
    relation = RelationKind(fact.relation) if fact.relation else None
    return ExtractedFact(
        key=f"f{position}",
        text=_clean(fact.text),
        slot=fact.slot or None,
        source_indexes=sources if relation is RelationKind.DERIVES else _only(sources, subject),
        relation=relation,
        related_to=related,
        is_inference=fact.is_inference or relation is RelationKind.DERIVES,
        condition=fact.condition or None,
        valid_from=_parse_date(fact.valid_from, context.tz),
        value=_said_value(fact, sources, subject, context.transcript),
        negated=fact.negated,
    )


def _said_value(
    fact: LlmFact, sources: Sequence[int], subject: set[int], transcript: Sequence[Message]
) -> str | None:
    """The slot's value when the note or a cited subject message holds it, else None (the
    proposal then falls back to the note, which the reviewer sees whole)."""
    value = _clean(fact.value or "")
    if not value or fact.slot is None:
        return None
    said = [_clean(fact.text)] + [transcript[i].text for i in sources if i in subject]
    return value if any(value.lower() in s.lower() for s in said) else None


def _only(sources: Sequence[int], subject: set[int]) -> tuple[int, ...]:
    # A stated fact keeps the question it answers only next to the subject's reply.
    return tuple(i for i in sources if i in subject or i + 1 in subject)


def _clean(text: str) -> str:
    return _QUOTES.sub("", " ".join(text.split()))[:MAX_FACT_CHARS].strip()


def _parse_date(value: str | None, tz: tzinfo | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value[:10]), datetime.min.time())
        except ValueError:
            return None  # a date the model could not write is not worth failing the batch
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz)
