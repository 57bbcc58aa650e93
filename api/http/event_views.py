"""How a ledger event leaves the API: its payload as JSON, forgotten values redacted, and
content withheld from roles that may not read it.

Shared by the per-subject event pages and the tenant's event stream, so forgetting is undone
by neither: a proposal of a forgotten field stays visible as a fact of the history, its value,
rationale and quote do not.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_core import to_jsonable_python

from factledger.api.http.auth import Principal, Role
from factledger.domain.events import ChangeProposed

_ENVELOPE = {"originator_id", "originator_version", "timestamp"}
REDACTED = "[forgotten]"
# What a person said or what is held about them: messages, values, quotes, summaries, notes
# and reasons. Analysts read the history's shape without it, as they read the review queue.
CONTENT_FIELDS = frozenset(
    {"transcript", "summary", "value", "condition", "rationale", "note", "reason"}
)
QUOTE = "quote"
_READS_CONTENT = frozenset({Role.SERVICE, Role.ADMIN, Role.REVIEWER})


def reads_content(principal: Principal) -> bool:
    return principal.role in _READS_CONTENT


def event_payload(event: object, forgotten: set[str]) -> dict[str, Any]:
    """The event's own fields (not the envelope), forgotten values redacted."""
    payload = {
        f.name: getattr(event, f.name)
        for f in dataclasses.fields(event)  # type: ignore[arg-type]
        if f.name not in _ENVELOPE
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
