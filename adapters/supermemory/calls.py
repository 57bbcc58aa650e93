"""Our timeouts and retries around SDK calls, and the one table mapping SDK errors to the port's.

The SDK is built with `max_retries=0`: its own policy (up to 60 s x 3 attempts, 409 retried)
would blow any recall budget. Each port call gets one `Deadline`; every HTTP attempt inside it
runs with `min(attempt_timeout_s, time left)` and under a hard `asyncio.timeout`, so the call
returns or raises by its deadline whatever the server does.

| Outcome | Port error | Retried |
| --- | --- | --- |
| 400 / 422 | `InvalidMemoryInputError` | no |
| 401, 402 (out of credits), 403 | `MemoryUnavailableError` | no |
| 404 | `MemoryNotFoundError` | no |
| 409 | `MemoryConflictError` | no |
| 429 | `MemoryUnavailableError` | after `Retry-After`, only if it fits the deadline |
| 5xx, connection error | `MemoryUnavailableError` | with backoff, within the deadline |
| timeout | `MemoryTimeoutError` | if time is left |

Messages carry the operation and the status code only; vendor exceptions (which can hold
response bodies and URLs) stay as `__cause__` and never reach a message or a log line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog
import supermemory
import tenacity
from tenacity import RetryCallState

from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryBackendError,
    MemoryConflictError,
    MemoryNotFoundError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)

T = TypeVar("T")
log = structlog.get_logger(__name__)
MIN_ATTEMPT_S = 0.02  # below this, another attempt cannot get an answer back


@dataclass(frozen=True, slots=True)
class CallPolicy:
    """Budgets: `timeout_s` for a whole port call, `attempt_timeout_s` for one HTTP attempt."""

    timeout_s: float = 10.0
    attempt_timeout_s: float = 5.0
    max_attempts: int = 3
    backoff_s: float = 0.2
    max_backoff_s: float = 2.0


class Deadline:
    """The instant a port call must be finished by (monotonic clock)."""

    def __init__(self, seconds: float) -> None:
        self.started = time.monotonic()
        self.at = self.started + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


class _RetryableError(Exception):
    """The attempt failed in a way worth another: `error` is the port's error should the call
    give up; `delay_s` the wait the server asked for (None: the policy's backoff)."""

    def __init__(self, error: MemoryBackendError, delay_s: float | None = None) -> None:
        super().__init__(str(error))
        self.error, self.delay_s = error, delay_s


async def call(
    op: str,
    attempt: Callable[[float], Awaitable[T]],
    policy: CallPolicy,
    deadline: Deadline,
) -> T:
    """Runs `attempt(timeout_s)` until it succeeds, fails for good, or the deadline passes.

    tenacity drives the loop: a retryable failure waits the server's `Retry-After` or the
    policy's backoff (doubling, jittered by +-10%), and the call gives up after `max_attempts`
    or when the wait would not end before the deadline."""
    backoff = tenacity.wait_exponential(
        multiplier=0.9 * policy.backoff_s, max=0.9 * policy.max_backoff_s
    ) + tenacity.wait_random_exponential(
        multiplier=0.2 * policy.backoff_s, max=0.2 * policy.max_backoff_s
    )

    def wait(state: RetryCallState) -> float:
        failure = _failure(state)
        return backoff(state) if failure is None or failure.delay_s is None else failure.delay_s

    def retried(state: RetryCallState) -> None:
        failure = _failure(state)
        log.info(
            "supermemory.call_retried",
            op=op,
            attempt=state.attempt_number,
            error_type=None if failure is None else type(failure.error).__name__,
            delay_ms=int((state.upcoming_sleep or 0.0) * 1000),
        )

    def gave_up(state: RetryCallState) -> T:
        failure = _failure(state)
        if failure is None:  # tenacity gives up only after a retryable failure
            raise MemoryUnavailableError(f"supermemory {op}: gave up")
        raise _give_up(
            op, failure.error, deadline, attempts=state.attempt_number
        ) from failure.__cause__

    tries = 0

    async def once() -> T:
        nonlocal tries
        tries += 1
        budget = min(policy.attempt_timeout_s, deadline.remaining())
        if budget < MIN_ATTEMPT_S:
            raise _give_up(op, MemoryTimeoutError(f"supermemory {op}: deadline passed"), deadline)
        try:
            async with asyncio.timeout(budget):
                return await attempt(budget)
        except (TimeoutError, supermemory.APITimeoutError) as exc:
            raise _RetryableError(MemoryTimeoutError(f"supermemory {op}: timed out"), 0.0) from exc
        except supermemory.APIStatusError as exc:
            raise _classify_status(op, exc, deadline, tries) from exc
        except supermemory.APIConnectionError as exc:
            error = MemoryUnavailableError(f"supermemory {op}: connection failed")
            raise _RetryableError(error) from exc
        except (TypeError, ValueError, supermemory.SupermemoryError) as exc:
            # A 2xx with an unexpected body surfaces as a bare TypeError from the SDK.
            error = MemoryUnavailableError(f"supermemory {op}: unreadable response")
            raise _give_up(op, error, deadline) from exc

    retrying = tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception_type(_RetryableError),
        wait=wait,
        stop=tenacity.stop_after_attempt(policy.max_attempts) | _PastDeadline(deadline),
        before_sleep=retried,
        retry_error_callback=gave_up,
    )
    result: T = await retrying(once)
    return result


class _PastDeadline(tenacity.stop.stop_base):
    """Stops when the wait before the next attempt would not end before the deadline."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return (retry_state.upcoming_sleep or 0.0) >= self._deadline.remaining()


def _failure(state: RetryCallState) -> _RetryableError | None:
    exc = None if state.outcome is None else state.outcome.exception()
    return exc if isinstance(exc, _RetryableError) else None


def _classify_status(
    op: str, exc: supermemory.APIStatusError, deadline: Deadline, tries: int
) -> _RetryableError | MemoryBackendError:
    """The port's error for a status, wrapped as retryable when another attempt may help;
    a final one is logged here, as given up after `tries` attempts."""
    status = exc.status_code
    error: MemoryBackendError
    if status in (400, 422):
        error = InvalidMemoryInputError("request", f"rejected by supermemory ({status})")
    elif status == 404:
        error = MemoryNotFoundError(f"supermemory {op}: not found")
    elif status == 409:
        error = MemoryConflictError(f"supermemory {op}: conflict (409)")
    elif status == 429:
        error = MemoryUnavailableError(f"supermemory {op}: rate limited (429)")
        return _RetryableError(error, _retry_after(exc))
    elif status >= 500:
        return _RetryableError(MemoryUnavailableError(f"supermemory {op}: server error ({status})"))
    else:  # 401, 402 (out of credits), 403 and anything unmapped: retrying cannot help
        error = MemoryUnavailableError(f"supermemory {op}: refused ({status})")
    return _give_up(op, error, deadline, attempts=tries)


def _retry_after(exc: supermemory.APIStatusError) -> float | None:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(str(headers["retry-after-ms"])) / 1000)
        if "retry-after" in headers:
            return max(0.0, float(str(headers["retry-after"])))
    except ValueError:
        return None  # an HTTP-date: fall back to our own backoff
    return None


def _give_up(
    op: str, error: MemoryBackendError, deadline: Deadline, *, attempts: int = 1
) -> MemoryBackendError:
    # A 404 is an answer (no such record), not a failure worth a warning.
    emit = log.debug if isinstance(error, MemoryNotFoundError) else log.warning
    emit(
        "supermemory.call_failed",
        op=op,
        error_type=type(error).__name__,
        attempts=attempts,
        elapsed_ms=deadline.elapsed_ms(),
    )
    return error


async def add_verbatim(
    client: supermemory.AsyncSupermemory,
    namespace: str,
    doc_id: str,
    content: str,
    metadata: dict[str, Any],
    policy: CallPolicy,
    deadline: Deadline,
) -> None:
    """Adds one document to be kept word for word: `superrag` indexes it without mining it for
    facts, and `instant` makes it readable as soon as the call returns."""
    await call(
        "add",
        lambda t: client.add(
            namespace,
            content=content,
            id=doc_id,
            metadata=metadata,
            task_type="superrag",
            dreaming="instant",
            timeout=t,
        ),
        policy,
        deadline,
    )
