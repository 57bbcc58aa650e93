"""Console pages fail as pages: an unexpected error is an HTML 500 with the request id and
nothing of the request, a database that is down an HTML 503 that says so (ADR 0019)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import structlog
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, token
from support.console_seed import Seeded, seed_queue, sign_in

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.application.errors import MemoryUnavailableError
from factledger.application.ledger.ports import ViewStoreUnavailableError
from factledger.testing.manual_clock import ManualClock

NO_LIMITS = RateLimitSettings(enabled=False)
SECRET = "the lead's diagnosis"  # what a failing read might carry in its message
FILTER = "agent:confidential-filter-value"  # what the failing request itself carried


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock())


@pytest.fixture
def seeded(ports: Runtime) -> Seeded:
    return seed_queue(ports, ManualClock())


@pytest.fixture
async def web(ports: Runtime, seeded: Seeded) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH, rate_limit=NO_LIMITS)) as c:
        await sign_in(c)
        yield c


def failing_queue(ports: Runtime, error: Exception) -> None:
    def fail(*_: Any, **__: Any) -> Any:
        raise error

    assert ports.queue is not None
    ports.queue.choices = fail  # type: ignore[method-assign]
    ports.queue.page = fail  # type: ignore[method-assign]


async def test_an_unexpected_error_is_an_html_500_with_the_request_id(
    web: httpx.AsyncClient, ports: Runtime
) -> None:
    failing_queue(ports, RuntimeError(SECRET))
    with structlog.testing.capture_logs() as logs:
        page = await web.get("/console/queue", params={"proposer": FILTER})

    assert page.status_code == 500
    assert page.headers["content-type"].startswith("text/html")
    assert "Something went wrong" in page.text
    assert page.headers["X-Request-ID"] in page.text
    assert SECRET not in page.text
    assert FILTER not in page.text
    assert "RuntimeError" not in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    failures = [e for e in logs if e["event"] == "api.unexpected_error"]
    assert [e["error_type"] for e in failures] == ["RuntimeError"]
    # `exc_info` holds the exception itself here; the log processors write its type and frames
    # only (`api.log_exceptions`, tested on its own), so every other key is what is logged.
    logged = repr([{k: v for k, v in e.items() if k != "exc_info"} for e in logs])
    assert SECRET not in logged
    assert FILTER not in logged
    served = [e for e in logs if e["event"] == "http.request_served"]
    assert [e["status"] for e in served] == [500]


async def test_the_request_id_a_caller_sent_is_the_one_shown(
    web: httpx.AsyncClient, ports: Runtime
) -> None:
    failing_queue(ports, KeyError(SECRET))
    page = await web.get("/console/queue", headers={"X-Request-ID": "trace-0042"})
    assert page.status_code == 500
    assert "trace-0042" in page.text


async def test_a_database_that_is_down_is_an_html_503_that_says_so(
    web: httpx.AsyncClient, ports: Runtime
) -> None:
    failing_queue(ports, ViewStoreUnavailableError("views at internal-host:5432 are down"))
    with structlog.testing.capture_logs() as logs:
        page = await web.get("/console/queue")

    assert page.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert "Database unavailable" in page.text
    assert "the database cannot be reached" in page.text
    assert page.headers["Retry-After"] == "5"
    assert page.headers["X-Request-ID"] in page.text
    assert "internal-host" not in page.text
    assert [e["error_type"] for e in logs if e["event"] == "api.dependency_failed"] == [
        "ViewStoreUnavailableError"
    ]


async def test_a_memory_backend_that_is_down_is_named_as_such(
    web: httpx.AsyncClient, ports: Runtime
) -> None:
    failing_queue(ports, MemoryUnavailableError("backend at internal-host:9999 refused"))
    page = await web.get("/console/queue")
    assert page.status_code == 503
    assert "Memory backend unavailable" in page.text
    assert "internal-host" not in page.text


async def test_the_api_keeps_its_json_500(web: httpx.AsyncClient, ports: Runtime) -> None:
    # Only the console renders pages; the API's own routes answer as before.
    failing_queue(ports, RuntimeError(SECRET))
    answer = await web.get("/v1/proposals/pending", headers=bearer(token(Role.REVIEWER)))
    assert answer.status_code == 500
    assert answer.json()["error"] == "InternalError"
