"""Shapes of the profile endpoints (current, a version, as of a time, field history, diff) and
of the analysts' event feed."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import ActorOut, EvidenceOut
from factledger.application.ledger.queries import (
    Clock,
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
    said_at: datetime | None = Field(
        default=None,
        description="When the words the value rests on were said (the conversation's clock).",
    )
    known_at: datetime | None = Field(
        default=None, description="When the ledger recorded the decision (the ledger's clock)."
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
            said_at=f.said_at,
            known_at=f.known_at,
        )


class ProfileOut(BaseModel):
    subject_id: UUID
    version: int = Field(
        description="The written version; on the said clock, the newest version among the "
        "fields shown (the answer itself is not a written version)."
    )
    at: datetime = Field(
        description="The version's date; on the said clock, the time asked about (`as_of`)."
    )
    cause: str = Field(
        examples=["confirmed"],
        description="registered | confirmed | forgotten, or said for an answer on the said clock",
    )
    fields: dict[str, ProfileFieldOut]
    said_at: datetime | None = Field(
        default=None,
        description="When the version's cause was said (the latest of the fields' "
        "on the said clock; none when nothing was said yet).",
    )
    known_at: datetime | None = Field(
        default=None, description="When the ledger recorded the version's cause."
    )
    clock: str | None = Field(
        default=None,
        examples=["said"],
        description="The clock an `as_of` answer was read on (said | known); none otherwise.",
    )

    @classmethod
    def of(cls, p: ProfileVersion, now: datetime, clock: Clock | None = None) -> ProfileOut:
        """`now`, the clock's time, decides which fields show as expired."""
        fields = {name: ProfileFieldOut.of(f, now) for name, f in p.fields.items()}
        return cls(
            subject_id=p.subject_id,
            version=p.version,
            at=p.at,
            cause=p.cause,
            fields=fields,
            said_at=p.said_at,
            known_at=p.known_at,
            clock=None if clock is None else clock.value,
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
    said_at: datetime | None = Field(
        default=None, description="When it was said (a forget or an expiry: when it was done)."
    )
    known_at: datetime | None = Field(default=None, description="When the ledger recorded it.")

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
            said_at=h.said_at,
            known_at=h.known_at,
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
    """Either two versions (`from_version`, `to_version`) or two times on one clock
    (`from_as_of`, `to_as_of`, `clock`); the other pair is null."""

    subject_id: UUID
    from_version: int | None
    to_version: int | None
    changes: list[FieldDiffOut]
    from_as_of: datetime | None = None
    to_as_of: datetime | None = None
    clock: str | None = None


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


class PendingListOut(BaseModel):
    items: list[PendingOut]


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
