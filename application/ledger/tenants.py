"""`TenantCache`: subject id -> tenant, bounded, for checks that need nothing else.

A subject's tenant is fixed by its first event and never changes, so an entry never goes
stale; only unknown ids are left out (they may be registered later). The map is cachetools'
`LRUCache`, behind a lock since it is not thread-safe.
"""

from __future__ import annotations

from threading import Lock
from uuid import UUID

from cachetools import LRUCache

TENANT_CACHE_SIZE = 100_000  # an id and a short name each: a few MB at most


class TenantCache:
    """A least-recently-used map of subject ids to tenants; safe across threads."""

    def __init__(self, maxsize: int = TENANT_CACHE_SIZE) -> None:
        self._tenants: LRUCache[UUID, str] = LRUCache(maxsize)
        self._lock = Lock()

    def get(self, subject_id: UUID) -> str | None:
        with self._lock:
            return self._tenants.get(subject_id)

    def put(self, subject_id: UUID, tenant: str) -> None:
        with self._lock:
            self._tenants[subject_id] = tenant

    def __len__(self) -> int:
        return len(self._tenants)
