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
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog
import supermemory

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


@dataclass(frozen=True, slots=True)
class _Retry:
    """The attempt failed in a retryable way: wait `delay_s`, then try again."""

    error: MemoryBackendError
    delay_s: float
    cause: BaseException


async def call(
    op: str,
    attempt: Callable[[float], Awaitable[T]],
    policy: CallPolicy,
    deadline: Deadline,
) -> T:
    """Runs `attempt(timeout_s)` until it succeeds, fails for good, or the deadline passes."""
    for number in range(1, policy.max_attempts + 1):
        budget = min(policy.attempt_timeout_s, deadline.remaining())
        if budget < MIN_ATTEMPT_S:
            raise _give_up(op, MemoryTimeoutError(f"supermemory {op}: deadline passed"), deadline)
        try:
            async with asyncio.timeout(budget):
                return await attempt(budget)
        except (TimeoutError, supermemory.APITimeoutError) as exc:
            failure = _Retry(MemoryTimeoutError(f"supermemory {op}: timed out"), 0.0, exc)
        except supermemory.APIStatusError as exc:
            outcome = _classify_status(op, exc, policy, number)
            if not isinstance(outcome, _Retry):
                raise _give_up(op, outcome, deadline, attempts=number) from exc
            failure = outcome
        except supermemory.APIConnectionError as exc:
            failure = _Retry(
                MemoryUnavailableError(f"supermemory {op}: connection failed"),
                _backoff(policy, number),
                exc,
            )
        except (TypeError, ValueError, supermemory.SupermemoryError) as exc:
            # A 2xx with an unexpected body surfaces as a bare TypeError from the SDK.
            error = MemoryUnavailableError(f"supermemory {op}: unreadable response")
            raise _give_up(op, error, deadline) from exc
        if number == policy.max_attempts or failure.delay_s >= deadline.remaining():
            raise _give_up(op, failure.error, deadline, attempts=number) from failure.cause
        log.info(
            "supermemory.call_retried",
            op=op,
            attempt=number,
            error_type=type(failure.error).__name__,
            delay_ms=int(failure.delay_s * 1000),
        )
        await asyncio.sleep(failure.delay_s)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def _classify_status(
    op: str, exc: supermemory.APIStatusError, policy: CallPolicy, number: int
) -> _Retry | MemoryBackendError:
    status = exc.status_code
    error: MemoryBackendError
    if status in (400, 422):
        error = InvalidMemoryInputError("request", f"rejected by supermemory ({status})")
    elif status == 404:
        error = MemoryNotFoundError(f"supermemory {op}: not found")
    elif status == 409:
        error = MemoryConflictError(f"supermemory {op}: conflict (409)")
    elif status == 429:
        retry_after = _retry_after(exc)
        error = MemoryUnavailableError(f"supermemory {op}: rate limited (429)")
        delay = retry_after if retry_after is not None else _backoff(policy, number)
        return _Retry(error, delay, exc)
    elif status >= 500:
        error = MemoryUnavailableError(f"supermemory {op}: server error ({status})")
        return _Retry(error, _backoff(policy, number), exc)
    else:  # 401, 402 (out of credits), 403 and anything unmapped: retrying cannot help
        error = MemoryUnavailableError(f"supermemory {op}: refused ({status})")
    return error


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


def _backoff(policy: CallPolicy, number: int) -> float:
    base = min(policy.max_backoff_s, policy.backoff_s * 2.0 ** (number - 1))
    return base * (0.9 + 0.2 * random.random())  # noqa: S311 - jitter, not security


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
