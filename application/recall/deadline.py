"""Run recall's lookups concurrently and stop at the deadline, whatever they are doing.

Each lookup stores what it has into a holder as soon as it has it, so when the deadline
cancels a lookup mid-way, the answer still carries its partial results.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass

import structlog

from factledger.application.recall.types import Degraded

log = structlog.get_logger(__name__)

# A lookup needs a few tens of milliseconds even on a quiet machine; with less than this share
# of the budget left, the lookups could only return empty-handed, so recall sheds at once.
MIN_START_SHARE = 0.1
# Kept back from the lookups for building, serialising and sending the answer, so that the
# answer (not just the lookups) is out within the budget on a busy process.
ANSWER_SHARE = 0.05
# When several lookups degrade, the answer names the most telling reason.
_SEVERITY = (Degraded.TIMEOUT, Degraded.BACKEND_ERROR, Degraded.SOURCE_ERROR)


@dataclass(frozen=True, slots=True)
class Lookup:
    """One concurrent lookup; `on_error` is the reason reported when it raises."""

    name: str
    run: Callable[[], Coroutine[object, object, None]]
    on_error: Degraded


class LookupDegraded(Exception):  # noqa: N818 - a reason, not an error of its own
    """Raised by a lookup whose failure has a reason other than its `on_error` (a part of it
    that reads another source); the cause is chained."""

    def __init__(self, reason: Degraded) -> None:
        super().__init__(reason.value)
        self.reason = reason


def _consume(task: asyncio.Task[None]) -> None:
    # A cancelled or failed lookup finishes after we stopped waiting; retrieve its outcome
    # so asyncio does not report "exception was never retrieved".
    if not task.cancelled():
        task.exception()


async def run_within(budget_s: float, lookups: Sequence[Lookup]) -> dict[str, Degraded]:
    """Runs the lookups concurrently for at most `budget_s`; returns the failed ones.

    - Lookups still running at the deadline are cancelled and reported as `timeout`; the call
      returns at once without waiting for them to acknowledge the cancellation.
    - A lookup that raises is reported with its `on_error` reason; nothing is raised.
    - If the caller is cancelled, every lookup is cancelled too.
    """
    tasks = {asyncio.create_task(lookup.run()): lookup for lookup in lookups}
    if not tasks:
        return {}
    try:
        done, pending = await asyncio.wait(tasks, timeout=max(budget_s, 0.0))
    finally:
        for task in tasks:
            task.add_done_callback(_consume)
            if not task.done():
                task.cancel()
    failures = {tasks[task].name: Degraded.TIMEOUT for task in pending}
    for task in done:
        lookup = tasks[task]
        if task.cancelled():
            failures[lookup.name] = Degraded.TIMEOUT
        elif (error := task.exception()) is not None:
            reason = error.reason if isinstance(error, LookupDegraded) else lookup.on_error
            failures[lookup.name] = reason
            cause = error.__cause__ if isinstance(error, LookupDegraded) else error
            log.warning(
                "recall.lookup_failed",
                lookup=lookup.name,
                error_type=type(cause or error).__name__,
            )
    for name in failures.keys() & {tasks[t].name for t in pending}:
        log.warning("recall.lookup_timed_out", lookup=name, budget_ms=round(budget_s * 1e3))
    return failures


def budget_left(budget_s: float, arrived_at: float | None) -> float:
    """What is left of `budget_s` for a request that arrived at `arrived_at` (`time.monotonic`
    when the request reached the process; None: it arrives now)."""
    if arrived_at is None:
        return budget_s
    return budget_s - (time.monotonic() - arrived_at)


def lookup_time(budget_s: float, left_s: float) -> float:
    """How long the lookups may run: what is left, less the share kept for the answer."""
    return left_s - budget_s * ANSWER_SHARE


def too_late_to_start(budget_s: float, left_s: float) -> bool:
    """Whether so little of the budget is left that starting the lookups would only make the
    answer late: less than `MIN_START_SHARE` of it."""
    return left_s < budget_s * MIN_START_SHARE


def worst(failures: dict[str, Degraded]) -> Degraded | None:
    """The reason to report for a set of failures (None when there are none)."""
    for reason in _SEVERITY:
        if reason in failures.values():
            return reason
    return None
