"""Deletes expired idempotency entries in the background of every process that holds a store.

A saved response lives `ttl_s` (a day by default) and a claim its lease, but a store replaces
an expired row only when its key comes back, which most keys never do: at a few hundred
requests a second with keys, a store would gain tens of millions of rows a day. Each process
sweeps at most `batch` entries every `interval_s`, and again at once while it finds full
batches, so it keeps ahead of the write rate (1,000 entries a second by default) without
holding a store's write lock for long. A sweep that fails (the store is away) is logged by its
error type and tried again after the interval: it never stops the process.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import structlog

from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.ports import IdempotencyStore

log = structlog.get_logger(__name__)

# Between two full batches: the requests on this event loop go first.
_CATCH_UP_PAUSE_S = 0.01


@dataclass(frozen=True, slots=True)
class SweepOptions:
    interval_s: float = 1.0
    batch: int = 1000

    def __post_init__(self) -> None:
        if self.interval_s <= 0 or self.batch < 1:
            raise ValueError("interval_s must be > 0 and batch >= 1")


async def sweep_once(store: IdempotencyStore, options: SweepOptions) -> int:
    """One batch; 0 if the store is away (logged)."""
    try:
        return await store.sweep_expired(options.batch)
    except StoreUnavailableError as error:
        log.warning("idempotency_sweep_failed", error_type=type(error).__name__)
        return 0


async def sweep_forever(
    store: IdempotencyStore, stop: asyncio.Event, options: SweepOptions = SweepOptions()
) -> None:
    """Sweeps until `stop` is set."""
    while not stop.is_set():
        swept = await sweep_once(store, options)
        pause = _CATCH_UP_PAUSE_S if swept >= options.batch else options.interval_s
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=pause)
