"""Per-process admission of writes, so that recall stays responsive under load.

- At most `limit` writes (commands: every POST, PUT, PATCH and DELETE outside recall and
  context) run at once in one API process. Another write waits up to `wait_s` for a slot,
  then answers 503 `ServerBusyError` with `Retry-After`; it never queues without bound.
- Recall and context never take a slot, so they never wait behind writes; blocking work runs
  in a thread pool larger than `limit` (`io_executor`), so writes cannot take every thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import structlog

from factledger.api.http.errors import ServerBusyError

log = structlog.get_logger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Threads beyond the write slots: recall's ledger reads, profile reads, the subject check.
READ_THREADS = 10


class WriteLimiter:
    """A bounded semaphore of write slots with a bounded wait."""

    def __init__(self, *, limit: int, wait_s: float) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self._slots = asyncio.BoundedSemaphore(limit)
        self.refused = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Holds one write slot for the caller's `async with` / dependency lifetime."""
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=self.wait_s)
        except TimeoutError:
            self.refused += 1
            log.warning("api.write_refused", limit=self.limit, waited_ms=round(self.wait_s * 1e3))
            raise ServerBusyError("too many writes in progress; retry shortly") from None
        try:
            yield
        finally:
            self._slots.release()


def io_executor(write_limit: int) -> ThreadPoolExecutor:
    """The default executor of an API process: room for every write slot and for reads."""
    return ThreadPoolExecutor(
        max_workers=write_limit + READ_THREADS, thread_name_prefix="factledger-io"
    )
