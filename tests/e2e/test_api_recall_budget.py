"""Recall's budget holds at the door: it counts from the request's arrival, the subject check
is inside it, and a process that cannot start a recall in time answers at once (degraded)
rather than late. Writes wait for one of a few per-process slots, or get 503; recall never
waits for them."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.http.middleware import ARRIVED_AT
from factledger.api.settings import ApiSettings, Settings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.policy import RecallPolicies
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.serial

REF = "crm-budget"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=REF))
SERVICE = bearer(token(Role.SERVICE))
RECALL = "/v1/subjects/me/recall"
CONTEXT = "/v1/subjects/me/context"
# The promise is 1 s for recall and 2 s for context; the margin covers a loaded test machine.
SLACK_S = 0.5


@pytest.fixture
def ports() -> Runtime:
    ports = build_ports(ManualClock(), policies=RecallPolicies())  # the product's budgets
    ports.ledger.register_subject(RegisterSubject("t1", "lead", REF))
    return ports


def http_for(ports: Runtime, settings: Settings | None = None) -> httpx.AsyncClient:
    settings = settings or Settings(auth=TEST_AUTH)
    app = create_app(settings, ports=ports, auth=TEST_AUTH)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with http_for(ports) as client:
        yield client


def tenant_read(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, read: Callable[[UUID], str]
) -> None:
    monkeypatch.setattr(ledger, "tenant_of", read)
    # The route skips the check for a subject whose tenant the process already read: these tests
    # are about the check, so the tenant is never known beforehand, whatever ran before.
    monkeypatch.setattr(ledger, "known_tenant", lambda subject_id: None)


async def timed_post(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> tuple[Any, float]:
    started = time.monotonic()
    response = await http.post(url, json=body, headers=AGENT)
    assert response.status_code == 200, response.text
    return response.json(), time.monotonic() - started


async def test_a_tenant_read_that_stalls_gives_a_degraded_recall_within_the_budget(
    http: httpx.AsyncClient, ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = threading.Event()

    def stalled(subject_id: UUID) -> str:
        released.wait(30)  # an event store that does not answer
        return "t1"

    tenant_read(ports.ledger, monkeypatch, stalled)
    try:
        recall, recall_s = await timed_post(http, RECALL, {"query": "supplier"})
        context, context_s = await timed_post(http, CONTEXT, {"topic": "supplier"})
    finally:
        released.set()
    assert (recall["degraded"], recall["notes"]) == ("timeout", [])
    assert recall_s < 1.0 + SLACK_S
    assert (context["degraded"], context["profile"]) == ("timeout", [])
    assert context_s < 2.0 + SLACK_S


async def test_an_unavailable_event_store_on_the_subject_check_is_a_degraded_answer_not_a_503(
    http: httpx.AsyncClient, ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(subject_id: UUID) -> str:
        raise EventStoreUnavailableError("event store unreachable")

    tenant_read(ports.ledger, monkeypatch, unavailable)
    recall, _ = await timed_post(http, RECALL, {"query": "supplier"})
    context, _ = await timed_post(http, CONTEXT, {})
    assert recall["degraded"] == context["degraded"] == "source_error"


class Arrivals:
    """The app, keeping the scope of the last request it was given: the API's middleware stamps
    the request's arrival into it, the time its budgets count from."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.scope: dict[str, Any] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope
        await self.app(scope, receive, send)

    def arrived_at(self) -> float:
        return float(self.scope["state"][ARRIVED_AT])


async def test_time_spent_before_recall_starts_counts_and_a_late_start_is_shed_at_once(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ports.ledger.tenant_of
    app = Arrivals(create_app(Settings(auth=TEST_AUTH), ports=ports, auth=TEST_AUTH))

    def slow(subject_id: UUID) -> str:
        # Queueing and a slow check take the budget down to less than recall needs to start
        # (a tenth of it), counted from the request's own arrival: the check then ends in that
        # last tenth however long the request took to reach it.
        time.sleep(max(0.0, app.arrived_at() + 0.905 - time.monotonic()))
        return real(subject_id)

    tenant_read(ports.ledger, monkeypatch, slow)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        answer, elapsed = await timed_post(http, RECALL, {"query": "supplier"})
    assert answer["degraded"] == "overloaded"
    assert elapsed < 1.0 + SLACK_S  # not 0.95 s + a fresh 1 s budget


async def test_another_tenants_subject_is_still_a_404_on_recall(http: httpx.AsyncClient) -> None:
    foreign = bearer(token(Role.AGENT, tenant="t2", kind="lead", ref=REF))
    response = await http.post(RECALL, json={"query": "x"}, headers=foreign)
    assert response.status_code == 404


async def test_writes_beyond_the_slots_get_503_while_recall_answers(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(auth=TEST_AUTH, api=ApiSettings(max_concurrent_writes=1, write_wait_s=0.1))
    gate = threading.Event()
    register = ports.ledger.register_subject

    def held(cmd: RegisterSubject) -> object:
        gate.wait(30)  # a write that takes its time
        return register(cmd)

    monkeypatch.setattr(ports.ledger, "register_subject", held)
    async with http_for(ports, settings) as http:
        body = {"kind": "lead", "external_ref": "crm-other"}
        first = asyncio.create_task(http.post("/v1/subjects", json=body, headers=SERVICE))
        await asyncio.sleep(0.05)  # the first write holds the only slot
        try:
            second = await http.post("/v1/subjects", json=body, headers=SERVICE)
            recall = await http.post(RECALL, json={"query": "supplier"}, headers=AGENT)
        finally:
            gate.set()
        assert (await first).status_code == 201
    assert second.status_code == 503
    assert second.json()["error"] == "ServerBusyError"
    assert second.headers["Retry-After"] == "1"
    assert recall.status_code == 200
    assert recall.json()["degraded"] is None
