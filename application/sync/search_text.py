"""The text that indexes each of our records in the backend's search.

A record is stored verbatim (canonical JSON, `apply.body`); its chunks, and so their vectors
and words, are cut from a rendering of the values a question could match instead: field names
as words, values, conditions, the quoted evidence, rationales, summaries. Keys, ids, versions,
timestamps and JSON punctuation are left out (so is a rationale's pointer to the message it
was said in, `proposals.plan.where_said`). They were about 190 of a proposal's 215 tokens
and most of the sync's inference time, and nothing searches for them: a record is
read by its id (`get_record`).

Every renderer reads the payload the body is made of, and returns None when no value is left
(an erased payload, a profile with no field): the record is then indexed by its body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from factledger.application.memory.record_ids import (
    KIND_CHANGE_PROPOSED,
    KIND_PROFILE_VERSION,
    KIND_SESSION_SUMMARY,
)
from factledger.application.proposals.plan import WHERE_SAID
from factledger.domain.values import field_words

# Whole strings that name or date something rather than say it; left out of summaries, whose
# shape the agent chooses (a proposal's or profile's ids and times are known keys instead).
_IDENTIFIER = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # a UUID
    r"|[0-9a-f]{16,}"  # a digest
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?",  # a timestamp
    re.IGNORECASE,
)
# The tag of a value payload (`domain.values.to_payload`): what kind of value, not a value.
_VALUE_TAG = "type"


def value_words(value: object) -> str:
    """A value payload's own words: "40000 EUR" of a money value, "a, b" of a list."""
    match value:
        case str():
            return value.strip()
        case bool():
            return "yes" if value else "no"
        case int() | float():
            return str(value)
        case Mapping():
            parts = (value_words(v) for k, v in value.items() if k != _VALUE_TAG)
            return " ".join(p for p in parts if p)
        case list() | tuple():
            return ", ".join(p for p in (value_words(v) for v in value) if p)
    return ""


def _sentences(*parts: str | None) -> str | None:
    """The parts as sentences: each ends with a stop, none with two."""
    kept = [p.strip() for p in parts if p and p.strip()]
    return " ".join(p if p[-1] in ".!?" else f"{p}." for p in kept) or None


def proposal_search_text(proposal: Mapping[str, object]) -> str | None:
    """ "supplier: Salesforce, for the EU office. We use Salesforce as our CRM. <rationale>." """
    field = proposal.get("field")
    if not isinstance(field, str):
        return None
    value = value_words(proposal.get("value"))
    change = {"unset": "remove", "append": f"add {value}"}.get(str(proposal.get("operation")))
    what = (change or value).strip()
    head = f"{field_words(field)}: {what}" if what else field_words(field)
    condition = proposal.get("condition")
    if isinstance(condition, str) and condition.strip():
        head = f"{head}, {condition.strip()}"
    evidence = proposal.get("evidence")
    quote = evidence.get("quote") if isinstance(evidence, Mapping) else None
    rationale = proposal.get("rationale")
    return _sentences(
        head,
        quote if isinstance(quote, str) else None,
        # The model's pointer to the message it read is ids, a third of the text's tokens.
        WHERE_SAID.sub("", rationale) if isinstance(rationale, str) else None,
    )


def profile_search_text(profile: Mapping[str, object]) -> str | None:
    """ "budget: 35k a year; supplier: Vireo Wraps, for the boxes": each confirmed field."""
    fields = profile.get("fields")
    if not isinstance(fields, Mapping):
        return None
    lines = []
    for name, entry in fields.items():
        if not isinstance(entry, Mapping):
            continue
        text = entry.get("text")
        words = text.strip() if isinstance(text, str) else value_words(entry.get("value"))
        condition = entry.get("condition")
        if isinstance(condition, str) and condition.strip():
            words = f"{words}, {condition.strip()}"
        lines.append(f"{field_words(str(name))}: {words}")
    return "; ".join(lines) or None


def summary_search_text(channel: str, summary: object) -> str | None:
    """ "voice: renewal call, asked for a discount": the summary's own words, by channel."""
    words = [w for w in _summary_words(summary) if w]
    return f"{channel}: {'. '.join(words)}" if words else None


def _summary_words(value: object) -> list[str]:
    match value:
        case str():
            text = value.strip()
            return [] if _IDENTIFIER.fullmatch(text) else [text]
        case Mapping():
            return [w for v in value.values() for w in _summary_words(v)]
        case list() | tuple():
            return [w for v in value for w in _summary_words(v)]
        case int() | float() if not isinstance(value, bool):
            return [str(value)]
    return []


def _summary_record(payload: Mapping[str, object]) -> str | None:
    return summary_search_text(str(payload.get("channel", "")), payload.get("summary"))


_RENDERERS: Mapping[str, Callable[[Mapping[str, object]], str | None]] = {
    KIND_CHANGE_PROPOSED: proposal_search_text,
    KIND_PROFILE_VERSION: profile_search_text,
    KIND_SESSION_SUMMARY: _summary_record,
}


def record_search_text(kind: str, payload: Mapping[str, object]) -> str | None:
    """The search text of one of our records, from the payload its body is the JSON of; None
    for a kind that is not ours."""
    render = _RENDERERS.get(kind)
    return None if render is None else render(payload)
