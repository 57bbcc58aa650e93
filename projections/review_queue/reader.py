"""`ReviewQueue` over a `QueueStore`: rows back into the read models the API and console show."""

from __future__ import annotations

from datetime import datetime

from factledger.application.review_queue.ports import ItemRow, QueueStore
from factledger.application.review_queue.queue import (
    GroupPage,
    QueueChoices,
    QueueCursor,
    QueueEntry,
    QueueFilter,
    QueueGroup,
    QueuePage,
    Selected,
)
from factledger.projections.profile.documents import pending_change


def entry_of(row: ItemRow) -> QueueEntry:
    return QueueEntry(
        position=row.position,
        change=pending_change(row.doc),
        kind=row.kind,
        external_ref=row.external_ref,
        group_key=row.group_key,
        said_at=None if row.said_at is None else datetime.fromisoformat(row.said_at),
        conversation_type=row.conversation_type,
    )


class StoreReviewQueue:
    """Implements `ReviewQueue`."""

    def __init__(self, store: QueueStore) -> None:
        self.store = store

    def page(self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int) -> QueuePage:
        found = self.store.page(tenant, where, cursor, limit)
        return QueuePage(
            [entry_of(r) for r in found.rows],
            found.total,
            found.next_cursor,
            found.previous_cursor,
            found.last_position,
        )

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> GroupPage:
        found = self.store.groups(tenant, where, offset=offset, limit=limit)
        following = offset + len(found.groups)
        return GroupPage(
            [QueueGroup(g.key, g.count, g.subjects, entry_of(g.sample)) for g in found.groups],
            found.total,
            following if following < found.total else None,
            found.last_position,
        )

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        return self.store.select(tenant, where, limit=limit)

    def choices(self, tenant: str) -> QueueChoices:
        return self.store.choices(tenant)
