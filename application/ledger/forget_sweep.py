"""Finishes forgets whose key deletion was interrupted, in the background of every API process.

A forget records its event, then deletes keys. A process killed between the two leaves the
words readable, and the client's retry with the same idempotency key is then answered from
the response saved with the event, never reaching the ledger (a retry after a 503 does reach
it, and finishes the deletion there); a client may also never retry. Each API process passes
over every recorded forget once at start-up, then over the forgets recorded since, every
`interval_s`: deleting a deleted key is a no-op, so the passes of several processes do not
conflict. A forgotten value stays readable at most one interval after the key store answers
again. A pass that fails (a store away) is logged by its error type and tried again after the
interval: it never stops the process.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Protocol

import structlog

from factledger.application.errors import StoreUnavailableError

log = structlog.get_logger(__name__)

_CATCH_UP_PAUSE_S = 0.01  # between two full batches: the requests on this loop go first


class FinishesForgetting(Protocol):
    def finish_forgetting(self, start: int = 1, *, limit: int = 500) -> tuple[int, int]: ...


@dataclass(frozen=True, slots=True)
class ForgetSweepOptions:
    interval_s: float = 30.0
    batch: int = 500

    def __post_init__(self) -> None:
        if self.interval_s <= 0 or self.batch < 1:
            raise ValueError("interval_s must be > 0 and batch >= 1")


async def finish_forgetting_forever(
    ledger: FinishesForgetting,
    stop: asyncio.Event,
    options: ForgetSweepOptions = ForgetSweepOptions(),
) -> None:
    """Passes over the recorded forgets until `stop` is set."""
    position = 1
    while not stop.is_set():
        read = 0
        try:
            read, position = await asyncio.to_thread(
                ledger.finish_forgetting, position, limit=options.batch
            )
        except StoreUnavailableError as error:
            log.warning("forget_sweep_failed", error_type=type(error).__name__)
        pause = _CATCH_UP_PAUSE_S if read >= options.batch else options.interval_s
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=pause)
