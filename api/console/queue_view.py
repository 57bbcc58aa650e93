"""The review queue as the console shows it: pending proposals with what they would replace.

Reads the profile projection only (`ProfileReader.review_queue`, `current`, `subject`), the
same read models the API's queue serves; filters narrow the tenant's queue, oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from factledger.application.errors import NotFoundError
from factledger.application.ledger.queries import (
    PendingChange,
    ProfileField,
    ProfileReader,
    SubjectSummary,
)
from factledger.domain.provenance import Actor, Origin

QUEUE_SCAN = 1000  # pending proposals read per page before the filters narrow them
QUEUE_SHOWN = 200


def actor_label(actor: Actor) -> str:
    return f"{actor.kind.value}:{actor.id}"


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """Each filter, when set, must match exactly (`proposer` as `kind:id` or the bare id)."""

    kind: str | None = None
    field: str | None = None
    origin: Origin | None = None
    proposer: str | None = None

    def admits(self, change: PendingChange, kind: str) -> bool:
        proposer = change.proposed_by
        return (
            (self.kind is None or kind == self.kind)
            and (self.field is None or change.field == self.field)
            and (self.origin is None or change.origin is self.origin)
            and (self.proposer is None or self.proposer in (proposer.id, actor_label(proposer)))
        )


@dataclass(frozen=True, slots=True)
class QueueItem:
    """A pending change, its subject, and the current value of its field (None: unset)."""

    change: PendingChange
    subject: SubjectSummary
    current: ProfileField | None

    @property
    def stale(self) -> bool:
        """The field changed after the version the proposal was based on: approving it would
        be refused as a conflict, so the queue says so before anyone tries."""
        current = self.current
        return current is not None and self.change.based_on_version < current.version


class _Subjects:
    """Subject summaries and current profiles, each read once per page."""

    def __init__(self, profiles: ProfileReader, tenant: str) -> None:
        self._profiles, self._tenant = profiles, tenant
        self._summaries: dict[UUID, SubjectSummary | None] = {}
        self._fields: dict[UUID, dict[str, ProfileField]] = {}

    def summary(self, subject_id: UUID) -> SubjectSummary | None:
        if subject_id not in self._summaries:
            try:
                found: SubjectSummary | None = self._profiles.subject(self._tenant, subject_id)
            except NotFoundError:
                found = None
            self._summaries[subject_id] = found
        return self._summaries[subject_id]

    def current(self, subject_id: UUID, field: str) -> ProfileField | None:
        if subject_id not in self._fields:
            profile = self._profiles.current(self._tenant, subject_id)
            self._fields[subject_id] = dict(profile.fields)
        found = self._fields[subject_id].get(field)
        return None if found is None or found.forgotten else found


def review_queue(
    profiles: ProfileReader, tenant: str, filters: QueueFilters, *, limit: int = QUEUE_SHOWN
) -> list[QueueItem]:
    """The tenant's pending proposals that pass the filters, oldest first."""
    subjects = _Subjects(profiles, tenant)
    items: list[QueueItem] = []
    for change in profiles.review_queue(tenant, limit=QUEUE_SCAN):
        summary = subjects.summary(change.subject_id)
        if summary is None or not filters.admits(change, summary.kind):
            continue
        current = subjects.current(change.subject_id, change.field)
        items.append(QueueItem(change, summary, current))
        if len(items) == limit:
            break
    return items


def queue_choices(profiles: ProfileReader, tenant: str) -> dict[str, list[str]]:
    """The values each filter can take in this tenant's queue (for its select boxes)."""
    subjects = _Subjects(profiles, tenant)
    kinds, fields, proposers = set(), set(), set()
    for change in profiles.review_queue(tenant, limit=QUEUE_SCAN):
        summary = subjects.summary(change.subject_id)
        if summary is not None:
            kinds.add(summary.kind)
        fields.add(change.field)
        proposers.add(actor_label(change.proposed_by))
    return {"kind": sorted(kinds), "field": sorted(fields), "proposer": sorted(proposers)}
