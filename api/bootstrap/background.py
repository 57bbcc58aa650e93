"""Tasks a runtime keeps on its event loop until it closes (the in-process sync worker, the
idempotency sweep)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack


def run_until_closed(
    run: Callable[[asyncio.Event], Awaitable[None]], stack: AsyncExitStack
) -> None:
    """Runs `run(stop)` as a task on this event loop; when `stack` closes, `stop` is set and
    the task awaited (before what the stack closes after it, e.g. the stores it uses)."""
    stop = asyncio.Event()
    task = asyncio.ensure_future(run(stop))

    async def halt() -> None:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    stack.push_async_callback(halt)
