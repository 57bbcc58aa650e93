"""`GET /v1/events/stream` on a real uvicorn server on loopback (ASGI transports buffer whole
responses): the tenant's events in order, a consumer that disconnects and resumes without a gap
or a duplicate, filters, content by role, forgotten values, heartbeats, and a closed stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
import uvicorn
from support.api_harness import TEST_AUTH, bearer, token
from support.serve_process import free_port, serve_env, wait_until_ready

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import ApiSettings, EventStreamSettings, RateLimitSettings, Settings
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.client import AsyncFactledgerClient, FactledgerClient, LedgerEvent

ENTRY = "from factledger.api.cli.main import main; main()"
SERVICE = token(Role.SERVICE)
ANALYST = token(Role.ANALYST)
OTHER_TENANT = token(Role.SERVICE, tenant="t2")
STREAM = "/v1/events/stream"
# A bound, not a measure: on a two-core machine that other work loads, a served process
# takes more than ten seconds to shut down.
WAIT_S = 30.0
HEARTBEAT_S = 0.2
# A stream that ignored the shutdown would send heartbeats for ever (uvicorn's wait for open
# connections is unbounded): any finite bound tells the two apart, and the process's shutdown
# beside its models' background loads takes seconds on a loaded machine.
SHUTDOWN_S = WAIT_S


@asynccontextmanager
async def serving(ports: Runtime) -> AsyncIterator[str]:
    settings = Settings(
        auth=TEST_AUTH,
        api=ApiSettings(
            event_stream=EventStreamSettings(heartbeat_s=HEARTBEAT_S, poll_s=0.05, batch=4),
            rate_limit=RateLimitSettings(enabled=False),
        ),
    )
    app = create_app(settings, ports=ports, auth=TEST_AUTH)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT_S)


async def register(api: str, kind: str, ref: str, jwt: str = SERVICE) -> str:
    async with httpx.AsyncClient(base_url=api, headers=bearer(jwt)) as http:
        created = await http.post("/v1/subjects", json={"kind": kind, "external_ref": ref})
        assert created.status_code == 201, created.text
        return str(created.json()["subject_id"])


async def propose(api: str, subject_id: str, field: str, value: str) -> str:
    body = {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": "inferred",
        "rationale": f"they mentioned {value}",
    }
    async with httpx.AsyncClient(base_url=api, headers=bearer(SERVICE)) as http:
        done = await http.post(f"/v1/subjects/{subject_id}/proposals", json=body)
        assert done.status_code == 201, done.text
        return str(done.json()["change_id"])


async def read_events(
    api: str, count: int, jwt: str = SERVICE, **params: Any
) -> list[dict[str, Any]]:
    """The first `count` events of a fresh stream (then the client disconnects)."""
    headers = bearer(jwt) | params.pop("headers", {})
    events: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(base_url=api, headers=headers, timeout=WAIT_S) as http,
        http.stream("GET", STREAM, params=params) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line.removeprefix("data:")))
                if len(events) == count:
                    break
    return events


def logged_cursors(ports: Runtime, tenant: str = "t1") -> list[str]:
    page = TenantEventLog(ports.ledger).read(tenant, after=0, limit=10_000)
    return [e.cursor for e in page.events]


def follow(api: str, count: int, after: str | None) -> tuple[list[LedgerEvent], str | None]:
    """The Python client's follower, on a thread (it blocks): `count` events, then stop."""
    with FactledgerClient(api, SERVICE) as client:
        follower = client.follow_events(after=after)
        got: list[LedgerEvent] = []
        for event in follower:
            got.append(event)
            if len(got) == count:
                break
        return got, follower.cursor


async def test_a_consumer_that_disconnects_resumes_without_a_gap_or_a_duplicate(
    ports: Runtime,
) -> None:
    async with serving(ports) as api:
        leads = [await register(api, "lead", f"crm-{n}") for n in range(3)]
        await register(api, "lead", "crm-elsewhere", OTHER_TENANT)
        await propose(api, leads[0], "supplier", "Supplier A")
        first, cursor = await asyncio.to_thread(follow, api, 3, None)
        # While it is away: more of its tenant's events, and another tenant's.
        await propose(api, leads[1], "supplier", "Supplier B")
        await register(api, "customer", "acct-9")
        await register(api, "lead", "crm-elsewhere-2", OTHER_TENANT)
        expected = logged_cursors(ports)
        rest, _ = await asyncio.wait_for(
            asyncio.to_thread(follow, api, len(expected) - 3, cursor), WAIT_S
        )
    seen = [e.cursor for e in first + rest]
    assert seen == expected  # in order, none missing, none twice
    assert len(set(seen)) == len(seen) == 6  # three leads, two proposals, one customer
    assert cursor == first[-1].cursor
    assert {e.subject_kind for e in rest} == {"lead", "customer"}


async def test_last_event_id_resumes_after_that_cursor(ports: Runtime) -> None:
    async with serving(ports) as api:
        for n in range(4):
            await register(api, "lead", f"crm-{n}")
        everything = await read_events(api, 4)
        resumed = await read_events(api, 2, headers={"Last-Event-ID": everything[1]["cursor"]})
        again = await read_events(api, 2, after=everything[1]["cursor"])
    assert [e["cursor"] for e in resumed] == [e["cursor"] for e in everything[2:]]
    assert again == resumed


async def test_cursors_are_opaque_and_per_tenant(ports: Runtime) -> None:
    """A cursor shows nothing of the log's positions (whose gaps would show other tenants'
    volume), and one tenant's cursor means nothing in another's stream."""
    async with serving(ports) as api:
        await register(api, "lead", "crm-1")
        await register(api, "lead", "crm-elsewhere", OTHER_TENANT)
        await register(api, "lead", "crm-2")
        mine = await read_events(api, 2)
        theirs = await read_events(api, 1, OTHER_TENANT)
        async with httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
            crossed = await http.get(
                STREAM,
                headers=bearer(OTHER_TENANT) | {"Last-Event-ID": mine[0]["cursor"]},
            )
            numeric = await http.get(STREAM, params={"after": "2"}, headers=bearer(SERVICE))
    assert all("position" not in e for e in mine + theirs)
    assert not any(c.isdigit() and len(c) < 8 for c in (e["cursor"] for e in mine))
    assert crossed.status_code == 422
    assert crossed.json()["field"] == "Last-Event-ID"
    assert numeric.status_code == 422  # a guessed position opens nothing


async def test_filters_keep_only_the_kinds_and_types_asked_for(ports: Runtime) -> None:
    async with serving(ports) as api:
        lead = await register(api, "lead", "crm-1")
        customer = await register(api, "customer", "acct-1")
        await propose(api, lead, "supplier", "Supplier A")
        await propose(api, customer, "plan", "Gold")
        customers = await read_events(api, 2, kind="customer")
        proposals = await read_events(api, 2, type="change_proposed")
    assert [(e["subject_id"], e["type"]) for e in customers] == [
        (customer, "registered"),
        (customer, "change_proposed"),
    ]
    assert [e["subject_id"] for e in proposals] == [lead, customer]


async def test_analysts_get_the_events_without_their_content(ports: Runtime) -> None:
    async with serving(ports) as api:
        lead = await register(api, "lead", "crm-1")
        await propose(api, lead, "supplier", "Supplier A")
        (_, service_view) = await read_events(api, 2)
        (_, analyst_view) = await read_events(api, 2, ANALYST)
    assert service_view["content"] is True
    assert service_view["payload"]["value"] == {"type": "text", "value": "Supplier A"}
    assert analyst_view["content"] is False
    assert analyst_view["payload"]["value"] is None
    assert analyst_view["payload"]["rationale"] is None
    assert analyst_view["payload"]["field"] == "supplier"
    assert "Supplier A" not in json.dumps(analyst_view)


async def test_a_forgotten_value_is_redacted_when_the_stream_is_read_again(
    ports: Runtime,
) -> None:
    async with serving(ports) as api:
        lead = await register(api, "lead", "crm-1")
        change = await propose(api, lead, "supplier", "Supplier A")
        async with httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
            url = f"/v1/subjects/{lead}/proposals/{change}/approve"
            approved = await http.post(url, json={}, headers=bearer(token(Role.REVIEWER)))
            assert approved.is_success, approved.text
            body = {"field": "supplier", "reason": "the subject asked"}
            forget = f"/v1/subjects/{lead}/forget"
            assert (await http.post(forget, json=body, headers=bearer(SERVICE))).is_success
        events = await read_events(api, 4)
    proposed = events[1]
    assert proposed["type"] == "change_proposed"
    assert proposed["payload"]["value"] is None
    assert proposed["payload"]["rationale"] == "[forgotten]"
    assert [e["type"] for e in events[2:]] == ["change_confirmed", "fact_forgotten"]
    assert "Supplier A" not in json.dumps(events)


async def test_an_idle_stream_sends_heartbeats_and_closes_when_the_client_leaves(
    ports: Runtime,
) -> None:
    async with serving(ports) as api:
        with structlog.testing.capture_logs() as logs:
            async with (
                httpx.AsyncClient(base_url=api, headers=bearer(SERVICE), timeout=WAIT_S) as http,
                http.stream("GET", STREAM) as response,
            ):
                lines = response.aiter_lines()
                heartbeat = await asyncio.wait_for(anext(lines), WAIT_S)
            deadline = time.monotonic() + WAIT_S  # the server notices on its next send
            while time.monotonic() < deadline:
                if any(log["event"] == "events.stream_closed" for log in logs):
                    break
                await asyncio.sleep(0.05)
    assert heartbeat == ": heartbeat"
    assert any(log["event"] == "events.stream_closed" for log in logs)


async def test_only_analysts_services_and_admins_may_follow(ports: Runtime) -> None:
    async with serving(ports) as api, httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
        for role in (Role.REVIEWER,):
            response = await http.get(STREAM, headers=bearer(token(role)))
            assert response.status_code == 403
        agent = token(Role.AGENT, kind="lead", ref="crm-1")
        assert (await http.get(STREAM, headers=bearer(agent))).status_code == 403
        assert (await http.get(STREAM)).status_code == 401


@pytest.mark.parametrize(
    ("params", "headers", "field"),
    [
        ({"type": "change_made"}, {}, "type"),
        ({"kind": "Lead!"}, {}, "kind"),
        ({}, {"Last-Event-ID": "seven"}, "Last-Event-ID"),
        ({}, {"Last-Event-ID": "-1"}, "Last-Event-ID"),
        ({}, {"Last-Event-ID": "A" * 65}, "Last-Event-ID"),
        ({"after": "-1"}, {}, "after"),
        ({"after": "17"}, {}, "after"),
    ],
)
async def test_a_bad_filter_or_position_is_a_422_naming_it(
    ports: Runtime, params: dict[str, str], headers: dict[str, str], field: str
) -> None:
    async with serving(ports) as api, httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
        response = await http.get(STREAM, params=params, headers=bearer(SERVICE) | headers)
    assert response.status_code == 422
    assert response.json()["field"] == field


def test_an_open_stream_ends_when_the_server_shuts_down(tmp_path: Path) -> None:
    port = free_port()
    env = serve_env(tmp_path)
    command = [sys.executable, "-c", ENTRY, "serve", "--port", str(port)]
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            command, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )
    api = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(api, process, log)
        with (
            httpx.Client(base_url=api, headers=bearer(SERVICE), timeout=WAIT_S) as http,
            http.stream("GET", STREAM) as response,
        ):
            assert response.status_code == 200
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(httpx.RemoteProtocolError):
                for _ in response.iter_lines():
                    pass  # heartbeats until the server closes the stream
            closed_s = time.monotonic() - started
        # uvicorn re-raises the signal it handled once it has shut down cleanly.
        assert process.wait(timeout=WAIT_S) in {0, -signal.SIGTERM}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert closed_s < SHUTDOWN_S
    assert "events.stream_closed" in log.read_text()


async def test_an_erased_subjects_events_stay_in_order_without_their_content(
    ports: Runtime,
) -> None:
    async with serving(ports) as api:
        lead = await register(api, "lead", "crm-1")
        await propose(api, lead, "supplier", "Supplier A")
        async with httpx.AsyncClient(base_url=api, headers=bearer(token(Role.ADMIN))) as http:
            erased = await http.request(
                "DELETE", f"/v1/subjects/{lead}", json={"reason": "erasure request"}
            )
            assert erased.is_success, erased.text
        events = await read_events(api, 3)
    assert [e["type"] for e in events] == ["registered", "change_proposed", "erased"]
    assert "Supplier A" not in json.dumps(events)


async def test_the_async_client_follows_and_resumes_too(ports: Runtime) -> None:
    async with serving(ports) as api:
        for n in range(3):
            await register(api, "lead", f"crm-{n}")
        async with AsyncFactledgerClient(api, SERVICE) as client:
            follower = client.follow_events(types=["registered"])
            first = []
            async for event in follower:
                first.append(event.cursor)
                if len(first) == 2:
                    break
            resumed = client.follow_events(after=follower.cursor)
            rest = [await asyncio.wait_for(anext(aiter(resumed)), WAIT_S)]
    assert first + [e.cursor for e in rest] == logged_cursors(ports)


async def test_a_store_that_fails_a_read_does_not_end_the_stream(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = iter([EventStoreUnavailableError("event store unavailable")])
    read = TenantEventLog.read

    def flaky(self: TenantEventLog, *args: Any, **kwargs: Any) -> Any:
        for failure in failures:
            raise failure
        return read(self, *args, **kwargs)

    monkeypatch.setattr(TenantEventLog, "read", flaky)
    async with serving(ports) as api:
        await register(api, "lead", "crm-1")
        with structlog.testing.capture_logs() as logs:
            (event,) = await read_events(api, 1)
    assert event["type"] == "registered"
    assert any(log["event"] == "events.stream_read_failed" for log in logs)
