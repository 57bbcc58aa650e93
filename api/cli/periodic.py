"""`run_every`: a maintenance task beside a long-running loop, such as the sync worker's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger(__name__)


async def run_every(
    interval_s: float, action: Callable[[], Awaitable[object]], stop: asyncio.Event, *, task: str
) -> None:
    """Runs `action` at once and then every `interval_s` seconds until `stop` is set.

    A failing round is logged by error type and the next round still comes: maintenance must
    never take down the worker it runs beside.
    """
    while not stop.is_set():
        try:
            await action()
        except Exception as exc:  # any failure: see the docstring
            log.warning("periodic.failed", task=task, error_type=type(exc).__name__)
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        except TimeoutError:
            continue
