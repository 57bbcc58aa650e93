"""The review queue as the console shows it: a page of pending proposals with what each would
replace, the groups of identical ones, and the filter behind both.

Reads the review queue projection (`ReviewQueue`: every pending item, filtered and counted by
its indexes) and, for the page's own subjects only, their current profiles (the "replaces"
column and the stale flag).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from factledger.application.ledger.ports import ProfileReader
from factledger.application.ledger.queries import PendingChange, ProfileField
from factledger.application.review_queue.ports import ReviewQueue
from factledger.application.review_queue.queue import (
    GroupPage,
    QueueCursor,
    QueueEntry,
    QueueFilter,
    QueuePage,
)

QUEUE_SHOWN = 50
GROUPS_SHOWN = 50
SUBJECT_PENDING = 200  # a subject's own pending proposals shown on its page


@dataclass(frozen=True, slots=True)
class QueueItem:
    """A pending change, its subject, and the current value of its field (None: unset)."""

    entry: QueueEntry
    current: ProfileField | None

    @property
    def change(self) -> PendingChange:
        return self.entry.change

    @property
    def said_at(self) -> datetime | None:
        return self.entry.said_at

    @property
    def stale(self) -> bool:
        """The field changed after the version the proposal was based on: approving it would
        be refused as a conflict, so the queue says so before anyone tries."""
        current = self.current
        return current is not None and self.change.based_on_version < current.version


def _items(profiles: ProfileReader, tenant: str, entries: list[QueueEntry]) -> list[QueueItem]:
    """Each entry with its field's current value (the page's profiles in one read; a subject
    erased since the queue's page was read has none)."""
    current = profiles.current_many(tenant, [entry.change.subject_id for entry in entries])
    items = []
    for entry in entries:
        profile = current.get(entry.change.subject_id)
        found = None if profile is None else profile.fields.get(entry.change.field)
        items.append(QueueItem(entry, None if found is None or found.forgotten else found))
    return items


@dataclass(frozen=True, slots=True)
class ShownPage:
    page: QueuePage
    items: list[QueueItem]


def queue_page(
    queue: ReviewQueue,
    profiles: ProfileReader,
    tenant: str,
    where: QueueFilter,
    cursor: QueueCursor,
    *,
    limit: int = QUEUE_SHOWN,
) -> ShownPage:
    page = queue.page(tenant, where, cursor, limit)
    return ShownPage(page, _items(profiles, tenant, page.entries))


def queue_groups(queue: ReviewQueue, tenant: str, where: QueueFilter, offset: int) -> GroupPage:
    return queue.groups(tenant, where, offset=offset, limit=GROUPS_SHOWN)


def subject_pending(
    queue: ReviewQueue, profiles: ProfileReader, tenant: str, subject_id: UUID
) -> list[QueueItem]:
    """The subject's own pending proposals, oldest first."""
    where = QueueFilter(subject_id=str(subject_id))
    page = queue.page(tenant, where, QueueCursor(), SUBJECT_PENDING)
    return _items(profiles, tenant, page.entries)
