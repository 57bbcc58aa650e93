"""`run_every`: rounds at once and on a timer, a failing round does not end the task."""

from __future__ import annotations

import asyncio

from factledger.api.cli.periodic import run_every


async def test_rounds_run_at_once_and_again_and_failures_do_not_stop_them() -> None:
    stop = asyncio.Event()
    rounds: list[int] = []

    async def action() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 2:
            raise RuntimeError("the database went away for a moment")
        if len(rounds) == 4:
            stop.set()

    await asyncio.wait_for(run_every(0.01, action, stop, task="test"), timeout=30)

    assert rounds == [0, 1, 2, 3]


async def test_stopping_ends_the_wait_without_another_round() -> None:
    stop, ran = asyncio.Event(), asyncio.Event()
    rounds: list[int] = []

    async def action() -> None:
        rounds.append(1)
        ran.set()

    task = asyncio.create_task(run_every(3_600, action, stop, task="test"))
    await asyncio.wait_for(ran.wait(), timeout=10)  # the first round, at once
    stop.set()
    await asyncio.wait_for(task, timeout=10)

    assert rounds == [1]
