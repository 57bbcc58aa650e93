"""Ports of the sync worker: the durable work queue, the ordered event feed, the profile as of
a version and the subject's tenant."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol

from factledger.application.errors import StoreUnavailableError
from factledger.application.sync.types import DeadLetter, FieldTrace, SyncItem

LedgerEvent = DomainEventProtocol[UUID]


class SyncStoreUnavailableError(StoreUnavailableError):
    """The sync store's database failed; the driver error is kept as `__cause__`."""


class SyncStore(Protocol):
    """The sync's durable state: the tracked position, pending items and dead letters.

    - `enqueue(items, after=p, upto=q)` adds the items and moves the position from p to q in
      one transaction; it returns False, adding nothing, if the position is no longer p (another
      worker fed first). Adding an existing item id is a no-op.
    - `claim` hands out at most `limit` pending items, never one already claimed by a live
      lease, and never an item of a subject whose earlier item is still pending (per-subject
      order); a claim lapses after `lease_s`, so a crashed worker's items come back.
    - `complete` removes an item, `complete_many` several (one statement where the store can);
      `fail` counts an attempt and makes the item claimable again
      after `retry_in_s`, or moves it to the dead letters when `retry_in_s` is None.
    - Dead letters never block later items; `retry_dead` makes them pending again.
    - `dead_letters` and `retry_dead` act on one tenant's items when given `tenant` (the
      operator's tools pass None: every tenant). Dead letters come in item order; `after`
      (an item id) resumes a listing after the last item of the previous page.
    """

    async def position(self) -> int: ...

    async def enqueue(self, items: Sequence[SyncItem], *, after: int, upto: int) -> bool: ...

    async def claim(self, worker_id: str, *, limit: int, lease_s: float) -> list[SyncItem]: ...

    async def complete(self, item_id: str) -> None: ...

    async def complete_many(self, item_ids: Sequence[str]) -> None: ...

    async def fail(self, item_id: str, *, error_type: str, retry_in_s: float | None) -> None: ...

    async def dead_letters(
        self, *, tenant: str | None = None, after: str | None = None, limit: int = 100
    ) -> list[DeadLetter]: ...

    async def retry_dead(
        self, item_ids: Sequence[str] | None = None, *, tenant: str | None = None
    ) -> int: ...

    async def pending_count(self) -> int: ...


class EventFeed(Protocol):
    """The ledger's events in commit order, by notification position (ids may have gaps), and
    the tenant each subject belongs to (fixed at registration). `head` is the newest position
    of the whole log, events the sync never reads included: the sync's position moves past
    those too, so an idle sync's position is the head (its lag reads 0).

    `read` serves planning: a recorded session's messages may keep their texts sealed (whether
    it has messages is what a plan asks). `get` gives the event whole, its messages' words
    opened."""

    async def head(self) -> int: ...

    async def read(
        self, *, after: int, limit: int, upto: int | None = None
    ) -> list[tuple[int, LedgerEvent]]: ...

    async def get(self, position: int) -> LedgerEvent: ...

    async def tenants_of(self, subject_ids: Iterable[UUID]) -> dict[UUID, str]: ...


class ProfileVersions(Protocol):
    """The profile as of one version of the subject's stream, as a JSON-safe object; and, for
    a forgotten field, the profile versions and proposals that carried it up to a version."""

    async def profile_at(self, subject_id: UUID, subject_version: int) -> Mapping[str, object]: ...

    async def field_trace(
        self, subject_id: UUID, field: str, subject_version: int
    ) -> FieldTrace: ...

    async def kind_of(self, subject_id: UUID) -> str:
        """The subject's kind (fixed at registration)."""
        ...


class SubjectTenants(Protocol):
    """The tenant a subject belongs to (fixed at registration)."""

    async def tenant_of(self, subject_id: UUID) -> str: ...
