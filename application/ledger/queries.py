"""Read models of the ledger and the port that serves them (implemented by `projections`).

Every read names the tenant: a subject of another tenant is `NotFoundError`, as if absent.
Values of a forgotten field read back as `value=None, forgotten=True` wherever they appear.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from uuid import UUID

from factledger.domain.provenance import Actor, Evidence, Origin
from factledger.domain.values import FieldValue


class Clock(StrEnum):
    """Which time a question about the past is asked on.

    `said`: the conversations' clock, when the subject said what the profile holds ("what
    had the customer told us by April?"), over everything the ledger knows now. `known`: the
    ledger's clock, when a decision put it in the profile ("what did our profile say in
    April?"), exactly the profile version written then.
    """

    SAID = "said"
    KNOWN = "known"


DEFAULT_CLOCK = Clock.SAID


@dataclass(frozen=True, slots=True)
class ProfileField:
    """One field of a profile version, with its provenance."""

    name: str
    value: FieldValue | None  # None only when forgotten
    display: str
    condition: str | None  # kept verbatim ("if the pricing works")
    origin: Origin
    proposed_by: Actor
    confirmed_by: Actor
    confirmed_at: datetime
    evidence: Evidence | None  # where the subject said it
    change_id: UUID
    version: int  # the profile version that introduced this value
    forgotten: bool = False
    # Not served by recall and context from this time on (`FieldExpirySet`); readers compare
    # it with their clock, so the field stays here, and in history, after it.
    valid_until: datetime | None = None
    relayed_by: Actor | None = None  # who relayed the subject's confirming words
    # The two clocks: when the words the value rests on were said, and when the ledger
    # recorded the decision. None only in views written before they were kept.
    said_at: datetime | None = None
    known_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        return self.valid_until is not None and self.valid_until <= now


@dataclass(frozen=True, slots=True)
class ProfileVersion:
    """A profile as it stood at one version; versions never change (forget only redacts)."""

    subject_id: UUID
    version: int
    at: datetime
    cause: str  # registered | confirmed | forgotten | said (an answer on the said clock)
    fields: Mapping[str, ProfileField]
    # When the version's cause was said and when the ledger recorded it. An answer on the
    # said clock is not a written version: its `version` is the newest of its fields' and
    # its times are the latest of theirs.
    said_at: datetime | None = None
    known_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FieldHistoryEntry:
    """One step in a field's life: a value set (and until when), or the field forgotten."""

    field: str
    kind: str  # set | unset | append | remove | forgotten | kept (ADR 0160) | expiry
    at: datetime
    version: int
    until: datetime | None
    until_version: int | None
    value: FieldValue | None
    display: str | None
    condition: str | None
    origin: Origin | None
    proposed_by: Actor | None
    confirmed_by: Actor | None
    evidence: Evidence | None
    rationale: str | None
    reason: str | None  # why it was forgotten
    forgotten: bool = False
    note: str | None = None  # the reviewer's note on the approval that set it
    valid_until: datetime | None = None  # an expiry entry: from when the field is not served
    # The subject's confirming words and who relayed them (None for a reviewer's approval).
    confirmation: Evidence | None = None
    relayed_by: Actor | None = None
    said_at: datetime | None = None  # when it was said (a forget or expiry: when it was done)
    known_at: datetime | None = None  # when the ledger recorded it


@dataclass(frozen=True, slots=True)
class FieldDiff:
    field: str
    before: ProfileField | None
    after: ProfileField | None


@dataclass(frozen=True, slots=True)
class PendingChange:
    """A proposal waiting in the review queue."""

    tenant: str
    subject_id: UUID
    change_id: UUID
    field: str
    operation: str
    value: FieldValue | None
    display: str | None
    condition: str | None
    origin: Origin
    proposed_by: Actor
    proposed_at: datetime
    evidence: Evidence | None
    rationale: str
    based_on_version: int
    supersedes: tuple[UUID, ...] = ()  # the older pending changes of the field it replaced


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One recorded session in the index (counts only; transcripts stay in the ledger)."""

    session_id: str
    channel: str
    started_at: datetime
    ended_at: datetime | None
    interaction_number: int
    message_count: int
    withheld_count: int
    conversation_type: str | None = None


@dataclass(frozen=True, slots=True)
class SubjectSummary:
    subject_id: UUID
    tenant: str
    kind: str
    external_ref: str
    version: int
