"""Turns the projection's JSON documents back into the read models of `application.queries`."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from factledger.application.ledger.queries import (
    FieldHistoryEntry,
    PendingChange,
    ProfileField,
    ProfileVersion,
    SessionEntry,
    SubjectSummary,
)
from factledger.domain.provenance import Actor, Evidence, Origin
from factledger.domain.values import FieldValue, JsonObject, JsonValue, from_payload


def _str(value: JsonValue) -> str | None:
    return None if value is None else str(value)


def _int(value: JsonValue) -> int:
    return value if isinstance(value, int) else 0


def _time(value: JsonValue) -> datetime:
    return datetime.fromisoformat(str(value))


def _opt_time(value: JsonValue) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def _value(value: JsonValue) -> FieldValue | None:
    return from_payload(value) if isinstance(value, dict) else None


def _actor(value: JsonValue) -> Actor | None:
    return Actor.from_payload(value) if isinstance(value, dict) else None


def _evidence(value: JsonValue) -> Evidence | None:
    if not isinstance(value, dict):
        return None
    if value.get("quote") is None:  # redacted by a forget: keep where, drop what
        value = {**value, "quote": "[forgotten]"}
    return Evidence.from_payload(value)


def _origin(value: JsonValue) -> Origin | None:
    return None if value is None else Origin(str(value))


def profile_field(name: str, doc: JsonObject) -> ProfileField:
    return ProfileField(
        name=name,
        value=_value(doc.get("value")),
        display=str(doc.get("display")),
        condition=_str(doc.get("condition")),
        origin=Origin(str(doc["origin"])),
        proposed_by=Actor.from_payload(doc["proposed_by"]),  # type: ignore[arg-type]
        confirmed_by=Actor.from_payload(doc["confirmed_by"]),  # type: ignore[arg-type]
        confirmed_at=_time(doc["confirmed_at"]),
        evidence=_evidence(doc.get("evidence")),
        change_id=UUID(str(doc["change_id"])),
        version=_int(doc.get("version")),
        forgotten=bool(doc.get("forgotten", False)),
        valid_until=_opt_time(doc.get("valid_until")),
        # Views written before the two clocks were kept: the one date they had.
        said_at=_opt_time(doc.get("said_at") or doc.get("confirmed_at")),
        known_at=_opt_time(doc.get("known_at") or doc.get("confirmed_at")),
    )


def profile_version(doc: JsonObject) -> ProfileVersion:
    fields = doc.get("fields")
    fields = fields if isinstance(fields, dict) else {}
    cause = doc.get("cause")
    return ProfileVersion(
        subject_id=UUID(str(doc["subject_id"])),
        version=_int(doc.get("version")),
        at=_time(doc["at"]),
        cause=str(cause.get("kind")) if isinstance(cause, dict) else "",
        fields={
            name: profile_field(name, f)
            for name, f in sorted(fields.items())
            if isinstance(f, dict)
        },
        said_at=_opt_time(doc.get("said_at") or doc["at"]),
        known_at=_opt_time(doc.get("known_at") or doc["at"]),
    )


def history_entry(doc: JsonObject) -> FieldHistoryEntry:
    until_version = doc.get("until_version")
    return FieldHistoryEntry(
        field=str(doc["field"]),
        kind=str(doc["kind"]),
        at=_time(doc["at"]),
        version=_int(doc.get("version")),
        until=_opt_time(doc.get("until")),
        until_version=until_version if isinstance(until_version, int) else None,
        value=_value(doc.get("value")),
        display=_str(doc.get("display")),
        condition=_str(doc.get("condition")),
        origin=_origin(doc.get("origin")),
        proposed_by=_actor(doc.get("proposed_by")),
        confirmed_by=_actor(doc.get("confirmed_by") or doc.get("requested_by")),
        evidence=_evidence(doc.get("evidence")),
        rationale=_str(doc.get("rationale")),
        reason=_str(doc.get("reason")),
        forgotten=bool(doc.get("forgotten", False)) or doc.get("kind") == "forgotten",
        note=_str(doc.get("note")),
        valid_until=_opt_time(doc.get("valid_until")),
        said_at=_opt_time(doc.get("said_at") or doc["at"]),
        known_at=_opt_time(doc.get("known_at") or doc["at"]),
    )


def pending_change(doc: JsonObject) -> PendingChange:
    return PendingChange(
        tenant=str(doc["tenant"]),
        subject_id=UUID(str(doc["subject_id"])),
        change_id=UUID(str(doc["change_id"])),
        field=str(doc["field"]),
        operation=str(doc["operation"]),
        value=_value(doc.get("value")),
        display=_str(doc.get("display")),
        condition=_str(doc.get("condition")),
        origin=Origin(str(doc["origin"])),
        proposed_by=Actor.from_payload(doc["proposed_by"]),  # type: ignore[arg-type]
        proposed_at=_time(doc["proposed_at"]),
        evidence=_evidence(doc.get("evidence")),
        rationale=str(doc.get("rationale") or ""),
        based_on_version=_int(doc.get("based_on_version")),
        supersedes=tuple(UUID(str(c)) for c in _list(doc.get("supersedes"))),
    )


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def session_entry(doc: JsonObject) -> SessionEntry:
    return SessionEntry(
        session_id=str(doc["session_id"]),
        channel=str(doc["channel"]),
        started_at=_time(doc["started_at"]),
        ended_at=_opt_time(doc.get("ended_at")),
        interaction_number=_int(doc.get("interaction_number")),
        message_count=_int(doc.get("message_count")),
        withheld_count=_int(doc.get("withheld_count")),
        # Absent from documents written before sessions carried one.
        conversation_type=_str(doc.get("conversation_type")),
    )


def subject_summary(doc: JsonObject) -> SubjectSummary:
    return SubjectSummary(
        subject_id=UUID(str(doc["subject_id"])),
        tenant=str(doc["tenant"]),
        kind=str(doc["kind"]),
        external_ref=str(doc["external_ref"]),
        version=_int(doc.get("version")),
    )
