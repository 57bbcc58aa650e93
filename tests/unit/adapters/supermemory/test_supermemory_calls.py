"""The retry and error-mapping table of `supermemory_calls.call`, with scripted SDK failures."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx
import pytest
import structlog
import supermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, call
from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryBackendError,
    MemoryConflictError,
    MemoryNotFoundError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)

POLICY = CallPolicy(timeout_s=2.0, attempt_timeout_s=0.5, max_attempts=3, backoff_s=0.01)
BODY_SECRET = "the user's private note"


def status_error(status: int, headers: dict[str, str] | None = None) -> supermemory.APIStatusError:
    request = httpx.Request("POST", "http://sm/ns/u1/search")
    response = httpx.Response(status, headers=headers, json={"error": BODY_SECRET}, request=request)
    return supermemory.APIStatusError(
        f"Error code: {status} - {BODY_SECRET}",
        response=response,
        body={"error": BODY_SECRET},
        status_code=status,
    )


def script(*outcomes: BaseException | str) -> tuple[Callable[[float], Awaitable[str]], list[float]]:
    """An attempt function failing with the given errors in turn, then returning "ok"."""
    budgets: list[float] = []
    queue = list(outcomes)

    async def attempt(budget: float) -> str:
        budgets.append(budget)
        outcome = queue.pop(0) if queue else "ok"
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return attempt, budgets


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, InvalidMemoryInputError),
        (401, MemoryUnavailableError),
        (402, MemoryUnavailableError),
        (403, MemoryUnavailableError),
        (404, MemoryNotFoundError),
        (409, MemoryConflictError),
        (422, InvalidMemoryInputError),
    ],
)
async def test_final_statuses_map_to_port_errors_without_retry(
    status: int, error: type[MemoryBackendError]
) -> None:
    attempt, budgets = script(status_error(status))

    with pytest.raises(error) as caught:
        await call("search", attempt, POLICY, Deadline(POLICY.timeout_s))

    assert len(budgets) == 1
    assert BODY_SECRET not in str(caught.value)


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried_with_backoff(status: int) -> None:
    attempt, budgets = script(status_error(status), status_error(status))

    assert await call("search", attempt, POLICY, Deadline(POLICY.timeout_s)) == "ok"
    assert len(budgets) == 3


async def test_server_errors_give_up_after_max_attempts() -> None:
    attempt, budgets = script(*(status_error(503) for _ in range(5)))

    with pytest.raises(MemoryUnavailableError, match="503"):
        await call("search", attempt, POLICY, Deadline(POLICY.timeout_s))
    assert len(budgets) == POLICY.max_attempts


@pytest.mark.parametrize(
    "headers", [{"Retry-After": "0.05"}, {"retry-after-ms": "50"}, {"Retry-After": "Wed, 21 Oct"}]
)
async def test_a_429_waits_for_retry_after_or_backs_off(headers: dict[str, str]) -> None:
    attempt, budgets = script(status_error(429, headers))

    assert await call("search", attempt, POLICY, Deadline(POLICY.timeout_s)) == "ok"
    assert len(budgets) == 2


async def test_a_429_longer_than_the_deadline_fails_at_once() -> None:
    attempt, budgets = script(status_error(429, {"Retry-After": "60"}))

    with pytest.raises(MemoryUnavailableError, match="429"):
        await call("search", attempt, POLICY, Deadline(POLICY.timeout_s))
    assert len(budgets) == 1


async def test_each_attempt_gets_at_most_the_time_left() -> None:
    async def stall(budget: float) -> str:
        budgets.append(budget)
        await asyncio.sleep(10)
        return "never"

    budgets: list[float] = []
    with pytest.raises(MemoryTimeoutError):
        await call("search", stall, POLICY, Deadline(0.3))

    assert budgets  # attempts ran, each within what was left of 0.3 s
    assert all(budget <= 0.3 for budget in budgets)


async def test_sdk_timeouts_and_connection_errors_map_and_retry() -> None:
    timeout, budgets = script(supermemory.APITimeoutError(request=None))
    assert await call("search", timeout, POLICY, Deadline(POLICY.timeout_s)) == "ok"
    assert len(budgets) == 2

    refused, _ = script(*(supermemory.APIConnectionError(request=None) for _ in range(3)))
    with pytest.raises(MemoryUnavailableError, match="connection"):
        await call("search", refused, POLICY, Deadline(POLICY.timeout_s))


async def test_an_unreadable_success_body_is_unavailable_not_a_type_error() -> None:
    attempt, _ = script(TypeError("'NoneType' object is not subscriptable"))

    with pytest.raises(MemoryUnavailableError, match="unreadable"):
        await call("search", attempt, POLICY, Deadline(POLICY.timeout_s))


async def test_failures_log_operation_and_error_type_only() -> None:
    attempt, _ = script(status_error(503), status_error(402))

    with structlog.testing.capture_logs() as logs, pytest.raises(MemoryUnavailableError):
        await call("search", attempt, POLICY, Deadline(POLICY.timeout_s))

    assert [entry["event"] for entry in logs] == [
        "supermemory.call_retried",
        "supermemory.call_failed",
    ]
    assert all(entry["op"] == "search" for entry in logs)
    assert BODY_SECRET not in repr(logs)
