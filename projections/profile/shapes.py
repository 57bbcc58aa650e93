"""Document shapes of the profile projection: keys, builders and the forget redaction."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.domain.events import ChangeProposed, SessionRecorded
from factledger.domain.values import JsonObject, JsonValue, display_of

FORGOTTEN = "[forgotten]"
REDACTED_KEYS = ("value", "condition", "rationale", "note")
_UTC_ISO_LENGTH = len("2026-01-02T03:04:05.678901+00:00")


def key_time(at: datetime, iso: str | None = None) -> str:
    """`%Y%m%dT%H%M%S%f` in UTC, formatted by hand: `strftime` was a tenth of a rebuild.

    `iso`: `at.isoformat()`, when the caller has it. A UTC time with microseconds spells the
    key in its first 26 characters (`2026-01-02T03:04:05.678901`) less the separators: a
    fifth of the formatting's time, which a rebuild pays for every proposal. (A year before
    1000 is written unpadded below, padded in `iso`: it takes the long way.)"""
    if iso is not None and at.tzinfo is UTC and len(iso) == _UTC_ISO_LENGTH and at.year >= 1000:
        return iso[:26].replace("-", "").replace(":", "").replace(".", "")
    t = at.astimezone(UTC)
    return (
        f"{t.year}{t.month:02d}{t.day:02d}T{t.hour:02d}{t.minute:02d}{t.second:02d}"
        f"{t.microsecond:06d}"
    )


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


def change_doc(
    e: ChangeProposed, sid: str, tenant: str, queue_key: str, proposed_at: str
) -> JsonObject:
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
        "queue_key": queue_key,
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
