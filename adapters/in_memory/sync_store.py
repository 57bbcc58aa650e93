"""`SyncStore` in process memory: for the in-process worker with the in-memory backend.

Losing it on restart is correct there: the in-memory backend is lost too, and the fresh
worker replays the ledger from position 0 into the fresh backend.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from factledger.application.sync.types import DeadLetter, ItemState, SyncItem, item_order


@dataclass(slots=True)
class _Row:
    item: SyncItem
    state: ItemState = ItemState.PENDING
    available_at: float = 0.0
    leased_until: float = 0.0
    error_type: str | None = None


class InMemorySyncStore:
    """Items in a dict keyed by id; one asyncio lock makes each call atomic."""

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._rows: dict[str, _Row] = {}
        self._position = 0
        self._lock = asyncio.Lock()
        self._now = monotonic

    async def position(self) -> int:
        return self._position

    async def enqueue(self, items: Sequence[SyncItem], *, after: int, upto: int) -> bool:
        async with self._lock:
            if self._position != after:
                return False
            for item in items:
                self._rows.setdefault(item.item_id, _Row(item))
            self._position = upto
            return True

    async def claim(self, worker_id: str, *, limit: int, lease_s: float) -> list[SyncItem]:
        async with self._lock:
            now = self._now()
            pending = sorted(
                (r for r in self._rows.values() if r.state is ItemState.PENDING),
                key=lambda r: item_order(r.item.item_id),
            )
            first_of_subject: set[object] = set()
            claimed: list[SyncItem] = []
            for row in pending:
                if row.item.subject_id in first_of_subject:
                    continue  # an earlier item of this subject is still pending
                first_of_subject.add(row.item.subject_id)
                if row.available_at <= now and row.leased_until <= now and len(claimed) < limit:
                    row.leased_until = now + lease_s
                    claimed.append(row.item)
            return claimed

    async def complete(self, item_id: str) -> None:
        async with self._lock:
            self._rows.pop(item_id, None)

    async def complete_many(self, item_ids: Sequence[str]) -> None:
        # One at a time: nothing to save in memory, and a test's store that fails `complete`
        # fails here too.
        for item_id in item_ids:
            await self.complete(item_id)

    async def fail(self, item_id: str, *, error_type: str, retry_in_s: float | None) -> None:
        async with self._lock:
            row = self._rows.get(item_id)
            if row is None:
                return
            row.item = replace(row.item, attempts=row.item.attempts + 1)
            row.error_type = error_type
            row.leased_until = 0.0
            if retry_in_s is None:
                row.state = ItemState.DEAD
            else:
                row.available_at = self._now() + retry_in_s

    async def dead_letters(
        self, *, tenant: str | None = None, after: str | None = None, limit: int = 100
    ) -> list[DeadLetter]:
        start = (-1, -1) if after is None else item_order(after)
        dead = sorted(
            (
                r
                for r in self._rows.values()
                if self._is_dead(r, tenant) and item_order(r.item.item_id) > start
            ),
            key=lambda r: item_order(r.item.item_id),
        )
        return [
            DeadLetter(
                r.item.item_id,
                r.item.position,
                r.item.subject_id,
                r.item.kind,
                r.item.targets,
                r.item.attempts,
                r.error_type or "unknown",
            )
            for r in dead[:limit]
        ]

    async def retry_dead(
        self, item_ids: Sequence[str] | None = None, *, tenant: str | None = None
    ) -> int:
        async with self._lock:
            chosen = [
                r
                for r in self._rows.values()
                if self._is_dead(r, tenant) and (item_ids is None or r.item.item_id in item_ids)
            ]
            for row in chosen:
                row.state, row.available_at, row.error_type = ItemState.PENDING, 0.0, None
                row.item = replace(row.item, attempts=0)
            return len(chosen)

    @staticmethod
    def _is_dead(row: _Row, tenant: str | None) -> bool:
        return row.state is ItemState.DEAD and tenant in (None, row.item.tenant)

    async def pending_count(self) -> int:
        return sum(r.state is ItemState.PENDING for r in self._rows.values())
