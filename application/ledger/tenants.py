"""`TenantCache`: subject id -> tenant, bounded, for checks that need nothing else.

A subject's tenant is fixed by its first event and never changes, so an entry never goes
stale; only unknown ids are left out (they may be registered later).
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from uuid import UUID

TENANT_CACHE_SIZE = 100_000  # an id and a short name each: a few MB at most


class TenantCache:
    """A least-recently-used map of subject ids to tenants; safe across threads."""

    def __init__(self, maxsize: int = TENANT_CACHE_SIZE) -> None:
        self._maxsize = maxsize
        self._tenants: OrderedDict[UUID, str] = OrderedDict()
        self._lock = Lock()

    def get(self, subject_id: UUID) -> str | None:
        with self._lock:
            tenant = self._tenants.get(subject_id)
            if tenant is not None:
                self._tenants.move_to_end(subject_id)
            return tenant

    def put(self, subject_id: UUID, tenant: str) -> None:
        with self._lock:
            self._tenants[subject_id] = tenant
            self._tenants.move_to_end(subject_id)
            while len(self._tenants) > self._maxsize:
                self._tenants.popitem(last=False)

    def __len__(self) -> int:
        return len(self._tenants)
