"""`IdempotencyStore` in process memory: tests and single-process throwaway runs."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from uuid import UUID

from factledger.application.ledger.idempotency import (
    CLAIMED,
    DEFAULT_LEASE_S,
    DEFAULT_TTL_S,
    SWEEP_GRACE_S,
    Claim,
    IdempotencyScope,
    JsonBody,
    WallClock,
    settled,
)


@dataclass(frozen=True, slots=True)
class _Entry:
    fingerprint: str
    body: JsonBody | None  # None while the first request is still running
    expires_at: float


class InMemoryIdempotencyStore:
    """Entries in an LRU-bounded dict; a lock makes `claim` atomic across threads."""

    def __init__(
        self,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        lease_s: float = DEFAULT_LEASE_S,
        max_entries: int = 10_000,
        clock: WallClock = time.time,
    ) -> None:
        self._ttl_s, self._lease_s, self._max = ttl_s, lease_s, max_entries
        self._clock = clock
        self._entries: OrderedDict[IdempotencyScope, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim:
        now = self._clock()
        with self._lock:
            entry = self._entries.get(scope)
            if entry is not None and entry.expires_at > now:
                self._entries.move_to_end(scope)
                return settled(fingerprint, entry.fingerprint, entry.body)
            self._entries[scope] = _Entry(fingerprint, None, now + self._lease_s)
            self._entries.move_to_end(scope)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
            return CLAIMED

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None:
        with self._lock:
            entry = self._entries.get(scope)
            if entry is not None and entry.fingerprint == fingerprint:
                self._entries[scope] = _Entry(fingerprint, body, self._clock() + self._ttl_s)

    @property
    def lease_s(self) -> float:
        return self._lease_s

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool:
        now = self._clock()
        with self._lock:
            entry = self._entries.get(scope)
            if entry is None or entry.fingerprint != fingerprint or entry.body is not None:
                return False
            if entry.expires_at <= now:
                return False  # lapsed: a twin may claim it, so the holder must not revive it
            self._entries[scope] = _Entry(fingerprint, None, now + self._lease_s)
            return True

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None:
        with self._lock:
            entry = self._entries.get(scope)
            if entry is not None and entry.fingerprint == fingerprint and entry.body is None:
                del self._entries[scope]

    async def sweep_expired(self, limit: int) -> int:
        now = self._clock() - SWEEP_GRACE_S
        with self._lock:
            gone = [s for s, e in self._entries.items() if e.expires_at <= now][:limit]
            for scope in gone:
                del self._entries[scope]
            return len(gone)

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        with self._lock:
            gone = [
                scope
                for scope, entry in self._entries.items()
                if scope.tenant == tenant
                and scope.subject_id == subject_id
                and entry.body is not None
            ]
            for scope in gone:
                del self._entries[scope]
            return len(gone)
