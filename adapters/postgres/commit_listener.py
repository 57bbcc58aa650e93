"""`CommitListener`: wakes a sync worker when another process commits ledger events, so
what they write is searchable without waiting for the worker's next poll.

The `eventsourcing` library's PostgreSQL recorder runs `NOTIFY <events table>` inside the
transaction that inserts the events, so a notification is delivered only if, and only after,
the events are committed. The listener keeps one connection of its own (never one of the
pools: a `LISTEN`ing connection must stay open), calls `on_commit` for every notification and,
after each (re)connection, once more: commits made while it was not listening are not lost,
the worker just looks.

Notifications are a shortcut, not the source of truth: the worker still polls at its interval,
so a listener that is down (the database restarting) only brings back the poll's latency. A
lost connection is retried every `retry_s` until `stop`; a quiet one is checked every
`check_every_s` (one empty statement), so a server that went away silently is noticed too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import structlog
from psycopg import sql

log = structlog.get_logger(__name__)


class CommitListener:
    """`LISTEN channel` on its own connection, calling `on_commit` for each notification."""

    def __init__(
        self,
        conninfo: str,
        channel: str,
        on_commit: Callable[[], None],
        *,
        connect_kwargs: dict[str, Any] | None = None,
        retry_s: float = 1.0,
        check_every_s: float = 5.0,
    ) -> None:
        self._conninfo = conninfo
        self._channel = channel
        self._on_commit = on_commit
        self._connect_kwargs = {**(connect_kwargs or {}), "autocommit": True}
        self._retry_s = retry_s
        self._check_every_s = check_every_s
        self.connections = 0  # how many times it has (re)connected and listened

    async def run(self, stop: asyncio.Event) -> None:
        """Listens until `stop` is set, reconnecting after any failure."""
        while not stop.is_set():
            try:
                await self._listen(stop)
            except (psycopg.Error, OSError) as exc:
                log.warning(
                    "sync.listen_lost", channel=self._channel, error_type=type(exc).__name__
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self._retry_s)

    async def _listen(self, stop: asyncio.Event) -> None:
        conn = await psycopg.AsyncConnection.connect(self._conninfo, **self._connect_kwargs)
        async with conn:
            await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
            self.connections += 1
            log.info("sync.listening", channel=self._channel)
            self._on_commit()  # whatever was committed while nobody listened
            while not stop.is_set():
                heard = False
                async for _ in conn.notifies(timeout=self._check_every_s, stop_after=1):
                    heard = True
                    self._on_commit()
                if not heard:
                    await conn.execute("")  # raises if the server has gone away


def start_listening(listener: CommitListener) -> Callable[[], Awaitable[None]]:
    """Runs `listener` on this event loop; returns the coroutine function that stops it."""
    stop = asyncio.Event()
    task = asyncio.create_task(listener.run(stop))

    async def halt() -> None:
        stop.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return halt
