"""Document shapes of the profile projection: keys, builders and the forget redaction."""

from __future__ import annotations

from factledger.domain.events import ChangeProposed, SessionRecorded
from factledger.domain.values import JsonObject, JsonValue, display_of

FORGOTTEN = "[forgotten]"
REDACTED_KEYS = ("value", "condition", "rationale", "note")


def version_key(subject_id: str, version: int) -> str:
    return f"{subject_id}:{version:010d}"


def as_object(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def session_doc(e: SessionRecorded, position: int) -> JsonObject:
    """A session index entry: counts and times, never the transcript."""
    return {
        "subject_id": str(e.originator_id),
        "session_id": e.session_id,
        "channel": e.channel,
        "started_at": e.started_at.isoformat(),
        "ended_at": None if e.ended_at is None else e.ended_at.isoformat(),
        "interaction_number": e.interaction_number,
        "message_count": len(e.transcript or []),  # None once the subject is erased
        "withheld_count": e.withheld_count,
        "has_summary": e.summary is not None,
        "conversation_type": e.conversation_type,
        "position": position,
    }


def change_doc(e: ChangeProposed, sid: str, tenant: str, proposed_at: str) -> JsonObject:
    """A proposal as the change view and the review queue keep it (`sid`: its subject's id,
    `proposed_at`: its timestamp's ISO form)."""
    return {
        "tenant": tenant,
        "subject_id": sid,
        "change_id": str(e.change_id),
        "field": e.field,
        "operation": e.operation,
        "value": e.value,
        "display": None if e.value is None else display_of(e.value),
        "condition": e.condition,
        "origin": e.origin,
        "evidence": e.evidence,
        "rationale": e.rationale,
        "proposed_by": e.proposed_by,
        "based_on_version": e.based_on_version,
        "proposed_at": proposed_at,
        # When the evidence was said; None for events stored before proposals carried it.
        "said_at": None if e.said_at is None else e.said_at.isoformat(),
        "status": "pending",
    }


def redacted(doc: JsonObject) -> JsonObject:
    out: JsonObject = {**doc, "forgotten": True, "display": FORGOTTEN}
    for key in REDACTED_KEYS:
        if key in out:
            out[key] = None
    for key in ("evidence", "confirmation"):  # encrypted whole in the events, so dropped whole
        if key in out:
            out[key] = None
    return out
