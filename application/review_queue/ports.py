"""The review queue's ports: the projection writes rows through `QueueWrites`, readers ask
`ReviewQueue`. One store implements both (`adapters.sqlite.queue_store`,
`adapters.postgres.queue_store`), in indexed tables, so that every filtered page, count and
group is answered by an index rather than a scan of documents.

The store is a projection's: its rows and its position commit together, `drop` empties it
and a replay of the log from position 0 rebuilds it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from factledger.application.errors import StoreUnavailableError
from factledger.application.review_queue.queue import (
    GroupPage,
    QueueChoices,
    QueueCursor,
    QueueFilter,
    QueuePage,
    Selected,
)
from factledger.domain.values import JsonObject


class QueueStoreUnavailableError(StoreUnavailableError):
    """The review queue's database failed; the driver error is kept as `__cause__`."""


def time_key(at: datetime) -> str:
    """A UTC time as fixed-width text that sorts as the time does (the stores compare it)."""
    t = at.astimezone(UTC)
    return (
        f"{t.year:04d}{t.month:02d}{t.day:02d}T{t.hour:02d}{t.minute:02d}{t.second:02d}"
        f"{t.microsecond:06d}"
    )


@dataclass(frozen=True, slots=True)
class SubjectRow:
    subject_id: str
    tenant: str
    kind: str
    external_ref: str


@dataclass(frozen=True, slots=True)
class SessionRow:
    subject_id: str
    session_id: str
    conversation_type: str | None
    said_at: str  # ISO time the conversation started


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One pending proposal as the store keeps it: indexed columns and the change document."""

    tenant: str
    position: int
    subject_id: str
    change_id: str
    field: str
    origin: str
    proposer: str  # kind:id
    proposed_key: str  # `time_key` of the proposal's recording
    kind: str
    external_ref: str
    group_key: str
    session_id: str | None  # the evidence's conversation
    said_at: str | None
    conversation_type: str | None
    doc: JsonObject


class QueueWrites(Protocol):
    """One transaction of the projection; reads see its own writes."""

    def position(self) -> int: ...

    def advance(self, position: int) -> None: ...

    def subject(self, subject_id: str) -> SubjectRow | None: ...

    def put_subject(self, row: SubjectRow) -> None: ...

    def session(self, subject_id: str, session_id: str) -> SessionRow | None: ...

    def put_session(self, row: SessionRow) -> None:
        """Also dates the pending items that cite the session (a proposal may be recorded
        before the conversation it quotes)."""
        ...

    def add(self, row: ItemRow) -> None: ...

    def doc(self, subject_id: str, change_id: str) -> JsonObject | None:
        """The pending item's change document (None: not pending)."""
        ...

    def put_doc(self, subject_id: str, change_id: str, doc: JsonObject) -> None: ...

    def remove(self, subject_id: str, change_id: str) -> None:
        """The change was decided (or withdrawn): it leaves the queue."""
        ...

    def erase(self, subject_id: str) -> None:
        """The subject was erased: nothing of it stays."""
        ...


@dataclass(frozen=True, slots=True)
class RowPage:
    rows: list[ItemRow]
    total: int
    next_cursor: QueueCursor | None
    previous_cursor: QueueCursor | None
    last_position: int


@dataclass(frozen=True, slots=True)
class RowGroup:
    key: str
    count: int
    subjects: int
    sample: ItemRow


@dataclass(frozen=True, slots=True)
class RowGroups:
    groups: list[RowGroup]
    total: int
    last_position: int


class ReviewQueue(Protocol):
    """Reads of the tenant's pending proposals, oldest first (`projections.review_queue`)."""

    def page(
        self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int
    ) -> QueuePage: ...

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> GroupPage:
        """Groups of identical proposals the filter matches, largest first."""
        ...

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        """The first `limit` pending changes the filter matches, oldest first."""
        ...

    def choices(self, tenant: str) -> QueueChoices: ...


class QueueStore(Protocol):
    """The indexed tables: the projection writes them in transactions, readers page them."""

    name: str

    def transaction(self) -> AbstractContextManager[QueueWrites]:
        """Commits on normal exit, rolls back on an exception."""
        ...

    def position(self) -> int: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...

    def page(self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int) -> RowPage:
        """The rows after `cursor.after` (or before `cursor.before`) in position order."""
        ...

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> RowGroups:
        """Largest group first; ties oldest first."""
        ...

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]: ...

    def choices(self, tenant: str) -> QueueChoices: ...
