"""`Wakeup`: the ledger's commits wake the sync worker of the same process at once, instead
of at its next poll, so what is written is searchable sooner. The poll stays as the fallback for
writers in other processes.

`notify` may be called from any thread (the ledger saves in worker threads); a notification
while nobody waits is kept, so a commit made during a pass starts the next pass at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class Wakeup:
    """One waiter at a time; any number of notifiers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = False
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    def notify(self) -> None:
        with self._lock:
            self._pending = True
            waiter = self._waiter
        if waiter is not None:
            loop, event = waiter
            # A closed loop has nobody waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    async def wait(self, stop: asyncio.Event, *, within_s: float) -> None:
        """Returns on a notification (also one that came since the last wait), on `stop`, or
        after `within_s` seconds."""
        event = asyncio.Event()
        with self._lock:
            if self._pending:
                self._pending = False
                return
            self._waiter = (asyncio.get_running_loop(), event)
        waits = [asyncio.create_task(event.wait()), asyncio.create_task(stop.wait())]
        try:
            await asyncio.wait(waits, timeout=within_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
            with self._lock:
                # What woke us is read by the pass that follows; later commits set it again.
                self._waiter, self._pending = None, False
