"""Per-process admission of writes, so that recall stays responsive under load.

- At most `limit` writes (commands: every POST, PUT, PATCH and DELETE outside recall and
  context) run at once in one API process. Another write waits up to `wait_s` for a slot,
  then answers 503 `ServerBusyError` with `Retry-After`; it never queues without bound.
- Recall and context never take a slot, so they never wait behind writes; blocking work runs
  in a thread pool larger than `limit` (`io_executor`), so writes cannot take every thread.
- One tenant holds at most `tenant_limit` of the slots at once (`tenant_share` of them, at
  least one), so a tenant whose writes last (slow imports) cannot hold what the others need:
  its next write waits for one of its own slots within the same `wait_s`, then answers 429
  with `Retry-After` (its own volume, not the server's load); other tenants keep the rest.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import structlog

from factledger.api.http.errors import RateLimitedError, ServerBusyError

log = structlog.get_logger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Threads beyond the write slots: recall's ledger reads, profile reads, the subject check.
READ_THREADS = 10


class WriteLimiter:
    """A bounded semaphore of write slots with a bounded wait, and a share of them per tenant."""

    def __init__(self, *, limit: int, wait_s: float, tenant_share: float = 1.0) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self.tenant_limit = max(1, math.floor(limit * tenant_share))
        self._slots = asyncio.BoundedSemaphore(limit)
        self._held: dict[str, int] = {}  # tenant -> slots held; absent when none
        self._tenant_freed = asyncio.Condition()
        self.refused = 0

    @asynccontextmanager
    async def slot(self, tenant: str | None = None) -> AsyncIterator[None]:
        """Holds one write slot for the caller's `async with` / dependency lifetime; with a
        tenant, one of that tenant's share too."""
        deadline = asyncio.get_running_loop().time() + self.wait_s
        # A share as large as the process's slots limits nothing: the process's own refusal.
        if self.tenant_limit >= self.limit:
            tenant = None
        if tenant is not None:
            await self._take_tenant_slot(tenant)
        try:
            left = deadline - asyncio.get_running_loop().time()
            try:
                if self._slots.locked():  # a free slot is taken at once, whatever time is left
                    await asyncio.wait_for(self._slots.acquire(), timeout=max(left, 0.0))
                else:
                    await self._slots.acquire()
            except TimeoutError:
                self.refused += 1
                log.warning(
                    "api.write_refused", limit=self.limit, waited_ms=round(self.wait_s * 1e3)
                )
                raise ServerBusyError("too many writes in progress; retry shortly") from None
            try:
                yield
            finally:
                self._slots.release()
        finally:
            if tenant is not None:
                await self._give_tenant_slot(tenant)

    def held_by(self, tenant: str) -> int:
        return self._held.get(tenant, 0)

    async def _take_tenant_slot(self, tenant: str) -> None:
        async with self._tenant_freed:
            try:
                await asyncio.wait_for(
                    self._tenant_freed.wait_for(lambda: self.held_by(tenant) < self.tenant_limit),
                    timeout=self.wait_s,
                )
            except TimeoutError:
                self.refused += 1
                # The tenant is a deployment's configured name, never free text.
                log.warning("api.tenant_writes_refused", tenant=tenant, limit=self.tenant_limit)
                raise RateLimitedError("this tenant's share of concurrent writes", 1) from None
            self._held[tenant] = self.held_by(tenant) + 1

    async def _give_tenant_slot(self, tenant: str) -> None:
        async with self._tenant_freed:
            held = self.held_by(tenant) - 1
            if held > 0:
                self._held[tenant] = held
            else:
                self._held.pop(tenant, None)
            self._tenant_freed.notify_all()


def io_executor(write_limit: int) -> ThreadPoolExecutor:
    """The default executor of an API process: room for every write slot and for reads."""
    return ThreadPoolExecutor(
        max_workers=write_limit + READ_THREADS, thread_name_prefix="factledger-io"
    )
