"""Shapes of the profile endpoints (current, a version, as of a time, field history, diff) and
of the analysts' event feed."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import ActorOut, EvidenceOut
from factledger.application.ledger.queries import (
    FieldDiff,
    FieldHistoryEntry,
    PendingChange,
    ProfileField,
    ProfileVersion,
)
from factledger.domain.provenance import Evidence
from factledger.domain.values import FieldValue, to_payload


def _value(value: FieldValue | None) -> dict[str, Any] | None:
    return None if value is None else to_payload(value)


def _evidence(evidence: Evidence | None) -> EvidenceOut | None:
    if evidence is None:
        return None
    return EvidenceOut(
        session_id=evidence.session_id, message_index=evidence.message_index, quote=evidence.quote
    )


class ProfileFieldOut(BaseModel):
    value: dict[str, Any] | None = Field(examples=[{"type": "text", "value": "Supplier B"}])
    display: str
    condition: str | None
    origin: str = Field(examples=["stated"])
    proposed_by: ActorOut
    confirmed_by: ActorOut
    confirmed_at: datetime
    evidence: EvidenceOut | None
    change_id: UUID
    version: int
    forgotten: bool
    valid_until: datetime | None = Field(
        default=None, description="From this time on recall and context do not serve the field."
    )
    expired: bool = Field(
        default=False, description="`valid_until` has passed: kept here and in history only."
    )

    @classmethod
    def of(cls, f: ProfileField, now: datetime) -> ProfileFieldOut:
        return cls(
            value=_value(f.value),
            display=f.display,
            condition=f.condition,
            origin=f.origin.value,
            proposed_by=ActorOut.of(f.proposed_by),
            confirmed_by=ActorOut.of(f.confirmed_by),
            confirmed_at=f.confirmed_at,
            evidence=_evidence(f.evidence),
            change_id=f.change_id,
            version=f.version,
            forgotten=f.forgotten,
            valid_until=f.valid_until,
            expired=f.expired(now),
        )


class ProfileOut(BaseModel):
    subject_id: UUID
    version: int
    at: datetime
    cause: str = Field(examples=["confirmed"])
    fields: dict[str, ProfileFieldOut]

    @classmethod
    def of(cls, p: ProfileVersion, now: datetime) -> ProfileOut:
        """`now`, the clock's time, decides which fields show as expired."""
        fields = {name: ProfileFieldOut.of(f, now) for name, f in p.fields.items()}
        return cls(
            subject_id=p.subject_id, version=p.version, at=p.at, cause=p.cause, fields=fields
        )


class HistoryEntryOut(BaseModel):
    field: str
    kind: str = Field(examples=["set"])
    at: datetime
    version: int
    until: datetime | None
    until_version: int | None
    value: dict[str, Any] | None
    display: str | None
    condition: str | None
    origin: str | None
    proposed_by: ActorOut | None
    confirmed_by: ActorOut | None
    evidence: EvidenceOut | None
    rationale: str | None
    reason: str | None
    forgotten: bool
    note: str | None = Field(default=None, description="The reviewer's note on the approval.")
    valid_until: datetime | None = Field(
        default=None, description="An `expiry` entry: from when the field is not served."
    )

    @classmethod
    def of(cls, h: FieldHistoryEntry) -> HistoryEntryOut:
        return cls(
            field=h.field,
            kind=h.kind,
            at=h.at,
            version=h.version,
            until=h.until,
            until_version=h.until_version,
            value=_value(h.value),
            display=h.display,
            condition=h.condition,
            origin=None if h.origin is None else h.origin.value,
            proposed_by=None if h.proposed_by is None else ActorOut.of(h.proposed_by),
            confirmed_by=None if h.confirmed_by is None else ActorOut.of(h.confirmed_by),
            evidence=_evidence(h.evidence),
            rationale=h.rationale,
            reason=h.reason,
            forgotten=h.forgotten,
            note=h.note,
            valid_until=h.valid_until,
        )


class HistoryOut(BaseModel):
    subject_id: UUID
    field: str | None
    entries: list[HistoryEntryOut]


class FieldDiffOut(BaseModel):
    field: str
    before: ProfileFieldOut | None
    after: ProfileFieldOut | None

    @classmethod
    def of(cls, d: FieldDiff, now: datetime) -> FieldDiffOut:
        return cls(
            field=d.field,
            before=None if d.before is None else ProfileFieldOut.of(d.before, now),
            after=None if d.after is None else ProfileFieldOut.of(d.after, now),
        )


class DiffOut(BaseModel):
    subject_id: UUID
    from_version: int
    to_version: int
    changes: list[FieldDiffOut]


class PendingOut(BaseModel):
    subject_id: UUID
    change_id: UUID
    field: str
    operation: str
    value: dict[str, Any] | None
    display: str | None
    condition: str | None
    origin: str
    proposed_by: ActorOut
    proposed_at: datetime
    evidence: EvidenceOut | None
    rationale: str
    based_on_version: int
    supersedes: list[UUID] = Field(
        default_factory=list,
        description="Older pending changes of the field that this newer statement replaced.",
    )

    @classmethod
    def of(cls, p: PendingChange) -> PendingOut:
        return cls(
            subject_id=p.subject_id,
            change_id=p.change_id,
            field=p.field,
            operation=p.operation,
            value=_value(p.value),
            display=p.display,
            condition=p.condition,
            origin=p.origin.value,
            proposed_by=ActorOut.of(p.proposed_by),
            proposed_at=p.proposed_at,
            evidence=_evidence(p.evidence),
            rationale=p.rationale,
            based_on_version=p.based_on_version,
            supersedes=list(p.supersedes),
        )


class EventOut(BaseModel):
    version: int = Field(description="The event's position in the subject's stream (1, 2, ...).")
    topic: str = Field(examples=["factledger.subject.change_proposed.v1"])
    timestamp: datetime
    payload: dict[str, Any]


class EventPage(BaseModel):
    subject_id: UUID
    events: list[EventOut]
    next_after: int | None = Field(
        description="Pass as `after` for the next page; null at the end."
    )
