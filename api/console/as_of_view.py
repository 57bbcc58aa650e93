"""The subject page's look into the past: the profile as of a day on either clock, and what
changed between two days.

A day picked in the console means the end of that day in UTC: "as of 1 April" includes what
was said (or decided) on 1 April. On the known clock, a day before the ledger knew the
subject has no profile: the page says so rather than failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from uuid import UUID

from factledger.application.errors import NotFoundError
from factledger.application.ledger.ports import ProfileReader
from factledger.application.ledger.queries import Clock, FieldDiff, ProfileVersion


def end_of(day: date) -> datetime:
    return datetime.combine(day, time.max, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class LookBack:
    """What the page was asked: a day to see the profile at, two days to compare, a clock."""

    clock: Clock
    as_of: date | None = None
    compare: tuple[date, date] | None = None


@dataclass(frozen=True, slots=True)
class ProfileAt:
    """The answers: `profile` is None when the ledger did not know the subject on `as_of`."""

    asked: LookBack
    profile: ProfileVersion | None
    diff: list[FieldDiff] | None  # None: no two days chosen


def look_back(profiles: ProfileReader, tenant: str, subject_id: UUID, asked: LookBack) -> ProfileAt:
    """Reads what `asked` names (blocking; the caller runs it in a thread)."""
    profile = None
    if asked.as_of is not None:
        try:
            profile = profiles.as_of(tenant, subject_id, end_of(asked.as_of), asked.clock)
        except NotFoundError:
            profiles.subject(tenant, subject_id)  # a subject of another tenant stays a 404
    diff = None
    if asked.compare is not None:
        older, newer = (end_of(day) for day in asked.compare)
        diff = profiles.diff_at(tenant, subject_id, older, newer, asked.clock)
    return ProfileAt(asked, profile, diff)
