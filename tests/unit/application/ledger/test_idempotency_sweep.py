"""The background sweep of expired idempotency entries: it keeps ahead of full batches, waits
its interval otherwise, survives a store that is away, and stops when told."""

from __future__ import annotations

import asyncio
from uuid import UUID

import pytest

from factledger.application.errors import StorageFullError
from factledger.application.ledger.idempotency_sweep import (
    SweepOptions,
    sweep_forever,
    sweep_once,
)

WAIT_S = 10.0  # a bound for a hang only


class ScriptedStore:
    """Answers `sweep_expired` from a script; each answer is a count or an error to raise."""

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.limits: list[int] = []
        self.drained = asyncio.Event()
        self.partial = asyncio.Event()  # a batch short of its limit was answered

    async def sweep_expired(self, limit: int) -> int:
        self.limits.append(limit)
        if not self.answers:
            self.drained.set()
            return 0
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if answer < limit:
            self.partial.set()
        return answer

    # The rest of the port, unused by the sweep.
    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        raise NotImplementedError


async def test_full_batches_are_swept_back_to_back_then_the_interval_is_waited() -> None:
    store = ScriptedStore(5, 5, 5, 2)
    stop = asyncio.Event()
    options = SweepOptions(interval_s=30.0, batch=5)
    task = asyncio.create_task(sweep_forever(store, stop, options))  # type: ignore[arg-type]
    # Three full batches and the partial one come back to back (awaited, with a bound for a
    # hang: a loaded machine may take a while); then the 30 s interval, so no fifth call.
    await asyncio.wait_for(store.partial.wait(), timeout=WAIT_S)
    await asyncio.sleep(0.1)
    assert store.limits == [5, 5, 5, 5]
    stop.set()
    await asyncio.wait_for(task, timeout=WAIT_S)


async def test_a_store_that_is_away_is_logged_and_tried_again() -> None:
    store = ScriptedStore(StorageFullError("disk full"), 1)
    options = SweepOptions(interval_s=0.01, batch=5)
    assert await sweep_once(store, options) == 0  # type: ignore[arg-type]
    stop = asyncio.Event()
    task = asyncio.create_task(sweep_forever(store, stop, options))  # type: ignore[arg-type]
    await asyncio.wait_for(store.drained.wait(), timeout=WAIT_S)
    stop.set()
    await asyncio.wait_for(task, timeout=WAIT_S)
    assert store.answers == []


def test_options_refuse_a_sweep_that_would_never_run() -> None:
    with pytest.raises(ValueError, match="interval_s"):
        SweepOptions(interval_s=0)
    with pytest.raises(ValueError, match="batch"):
        SweepOptions(batch=0)
