"""How a ledger event leaves the service (the event stream, webhooks, a subject's event pages):
its payload as JSON, forgotten values redacted, content withheld where it may not go.

Forgetting is undone by none of them: a proposal of a forgotten field stays visible as a fact
of the history, its value, rationale and quote do not.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from factledger.application.ledger.event_log import LoggedEvent
from factledger.domain.events import ChangeProposed

_ENVELOPE = {"originator_id", "originator_version", "timestamp"}
# Never leaves the service: a session's fingerprint is a digest of its words, and a digest a
# reader can recompute confirms a guessed sentence. In the store it is sealed under the
# subject's key (shredded with it); a consumer recognises a re-sent session by its id.
# A rotation of the subject's key (its re-sealed values and retired key scopes) is the
# service's own bookkeeping: readers get the values through the events they belong to.
INTERNAL_FIELDS = frozenset({"fingerprint", "resealed", "retired_prefix"})
REDACTED = "[forgotten]"
# What a person said or what is held about them: messages, values, quotes, summaries, notes
# and reasons.
CONTENT_FIELDS = frozenset(
    {"transcript", "summary", "value", "condition", "rationale", "note", "reason"}
)
QUOTE = "quote"


def event_payload(event: object, forgotten: set[str]) -> dict[str, Any]:
    """The event's own fields (not the envelope), forgotten values redacted."""
    payload = {
        f.name: getattr(event, f.name)
        for f in dataclasses.fields(event)  # type: ignore[arg-type]
        if f.name not in _ENVELOPE and f.name not in INTERNAL_FIELDS
    }
    if isinstance(event, ChangeProposed) and event.field in forgotten:
        payload |= {"value": None, "condition": None, "rationale": REDACTED}
        if event.evidence is not None:
            payload["evidence"] = {**event.evidence, QUOTE: REDACTED}
    result: dict[str, Any] = to_jsonable_python(payload)
    return result


def without_content(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every content field nulled and evidence reduced to where it was said."""
    stripped = {k: (None if k in CONTENT_FIELDS else v) for k, v in payload.items()}
    evidence = stripped.get("evidence")
    if isinstance(evidence, dict):
        stripped["evidence"] = {k: v for k, v in evidence.items() if k != QUOTE}
    return stripped


def event_body(logged: LoggedEvent, forgotten: set[str], *, content: bool) -> dict[str, Any]:
    """One event as the stream and webhooks send it."""
    payload = event_payload(logged.event, forgotten)
    timestamp = getattr(logged.event, "timestamp", None)
    return {
        "cursor": logged.cursor,
        "type": logged.type,
        "subject_id": str(logged.subject_id),
        "subject_kind": logged.kind,
        "version": logged.event.originator_version,
        "timestamp": timestamp.isoformat() if isinstance(timestamp, datetime) else None,
        "content": content,
        "payload": payload if content else without_content(payload),
    }
