"""`/readyz` answers within a second whatever stalls, on the embedded default (SQLite ledger
and views, short-term memory, the in-process sync queue, the in-memory backend): a stalled
store is a 503 naming it, a stalled memory backend is reported and leaves the API ready."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.testing.stalling_backend import StallingBackend

# The promise to an orchestrator whose probe times out after 1 s.
ANSWER_WITHIN_S = 1.0

# Each test bounds a latency: run alone, so that another worker's load does not eat the 0.2 s
# between the checks' deadline and the promise (1.48 s was once measured beside a model test).
pytestmark = pytest.mark.serial


@contextmanager
def stalled(target: Any, method: str) -> Iterator[None]:
    """`target.method` blocks (a disk that stopped answering) until the test ends."""
    release = threading.Event()
    original: Callable[..., Any] = getattr(target, method)

    def stall(*args: Any, **kwargs: Any) -> Any:
        release.wait(timeout=30)
        return original(*args, **kwargs)

    setattr(target, method, stall)
    try:
        yield
    finally:
        release.set()
        setattr(target, method, original)


async def ready(runtime: Runtime) -> tuple[httpx.Response, float]:
    transport = httpx.ASGITransport(app=create_app(ports=runtime, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        started = time.monotonic()
        response = await http.get("/readyz")
        return response, time.monotonic() - started


async def test_every_store_answering_is_ready(runtime: Runtime) -> None:
    response, _ = await ready(runtime)
    assert response.status_code == 200
    checks = response.json()["checks"]
    assert set(checks) >= {"ledger", "views", "keys", "short_term", "sync_store", "memory"}
    assert set(checks.values()) == {"ok"}


async def test_a_stalled_ledger_is_a_503_naming_it_within_a_second(runtime: Runtime) -> None:
    with stalled(runtime.ledger.recorder, "max_notification_id"):
        response, took = await ready(runtime)
    assert response.status_code == 503
    assert response.json()["failing"] == ["ledger"]
    assert response.json()["checks"]["ledger"] == "timeout"
    assert response.headers["Retry-After"]
    assert took < ANSWER_WITHIN_S


async def test_stalled_views_are_a_503_naming_them_within_a_second(runtime: Runtime) -> None:
    with stalled(runtime.views, "position"):
        response, took = await ready(runtime)
    assert response.status_code == 503
    assert response.json()["failing"] == ["views"]
    assert took < ANSWER_WITHIN_S


async def test_a_failing_store_is_a_503_naming_it(runtime: Runtime) -> None:
    def broken() -> int:
        raise OSError("disk I/O error")

    runtime.ledger.keys.key = broken  # type: ignore[method-assign,assignment]
    response, took = await ready(runtime)
    assert response.status_code == 503
    assert response.json()["checks"]["keys"] == "unavailable"
    assert response.json()["failing"] == ["keys"]
    assert took < ANSWER_WITHIN_S


async def test_a_stalled_memory_backend_is_reported_within_a_second(runtime: Runtime) -> None:
    # Recall fails open, so a backend that hangs leaves the API ready; the probe still answers.
    assert runtime.backend is not None
    stalling = StallingBackend(runtime.backend, stall_s=30, faulty_calls=frozenset({"health"}))
    response, took = await ready(replace(runtime, backend=stalling))
    assert response.status_code == 200
    assert response.json()["checks"]["memory"] == "degraded"
    assert took < ANSWER_WITHIN_S


async def test_everything_stalled_still_answers_within_a_second(runtime: Runtime) -> None:
    assert runtime.backend is not None
    stalling = StallingBackend(runtime.backend, stall_s=30, faulty_calls=frozenset({"health"}))
    with (
        stalled(runtime.ledger.recorder, "max_notification_id"),
        stalled(runtime.views, "position"),
    ):
        response, took = await ready(replace(runtime, backend=stalling))
    assert response.status_code == 503
    assert response.json()["failing"] == ["ledger", "views"]
    assert response.json()["checks"]["memory"] == "degraded"
    assert took < ANSWER_WITHIN_S
