"""`/mcp` with the SDK loaded off the start-up path (`api.mcp.http`): building the served app
imports no part of the SDK; a call that arrives while it loads waits and is answered; one to a
process whose SDK could not load gets a 503 (its log line names the cause), and the rest of
the API answers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import structlog
from support.api_harness import TEST_AUTH, asgi_client, bearer, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.mcp import http as mcp_http

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
LOAD_WAIT_S = 60.0  # generous: only a load that never happens fails on it
HEADERS = {
    **bearer(token(Role.AGENT, kind="lead", ref="crm-mcp-load")),
    "Accept": "application/json, text/event-stream",
}


@asynccontextmanager
async def running(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """The API with `/mcp`, its lifespan started (where the SDK loads) and ended after."""
    app = mcp_http.create_app(ports=ports, auth=TEST_AUTH)
    async with app.router.lifespan_context(app), asgi_client(app) as client:
        yield client


def test_building_the_served_app_imports_no_part_of_the_sdk() -> None:
    probe = textwrap.dedent(
        """
        import json, sys
        from factledger.api.cli.serve import create_served_app
        create_served_app()
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))))
        """
    )
    out = subprocess.run(  # noqa: S603 - this interpreter, our own probe
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


async def test_a_call_while_the_sdk_loads_waits_and_is_answered(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported = mcp_http._import_sdk
    loading = asyncio.Event()

    def slow_import() -> None:
        loading.set()
        import time

        time.sleep(0.3)
        imported()

    monkeypatch.setattr(mcp_http, "_import_sdk", slow_import)
    async with running(ports) as client:
        await loading.wait()
        response = await client.post("/mcp", json=LIST_TOOLS, headers=HEADERS)

    assert response.status_code == 200, response.text
    names = {tool["name"] for tool in response.json()["result"]["tools"]}
    assert {"recall", "get_context", "propose_change"} <= names


async def test_a_process_whose_sdk_did_not_load_answers_503_and_serves_the_rest(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise ImportError("no module named mcp")

    monkeypatch.setattr(mcp_http, "_import_sdk", broken)
    with structlog.testing.capture_logs() as logs:
        async with running(ports) as client:
            refused = await client.post("/mcp", json=LIST_TOOLS, headers=HEADERS)
            ready = await client.get("/readyz")

    # No 503 body names its dependency (`errors.render`: messages may name hosts); the log does.
    assert refused.status_code == 503
    assert refused.json()["error"] == "ServiceUnavailableError"
    assert ready.status_code == 200
    assert {
        "event": "mcp.sdk_not_loaded",
        "error_type": "ImportError",
        "log_level": "error",
    } in logs


async def test_a_bad_bearer_is_refused_before_the_sdk_is_waited_for(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    never = asyncio.Event()

    async def waits_forever(self: object) -> None:
        await never.wait()

    monkeypatch.setattr(mcp_http._SdkLoader, "manager", waits_forever)
    async with running(ports) as client:
        response = await asyncio.wait_for(
            client.post("/mcp", json=LIST_TOOLS, headers=bearer("not-a-jwt")), timeout=30
        )

    assert response.status_code == 401
    assert response.json()["error"] == "AuthenticationError"


def _loader_waiting_its_turn(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> tuple[mcp_http._SdkLoader, asyncio.Event, list[str]]:
    """A served app's SDK loader whose turn (`after`: the routes, then what a first message
    needs) has not come, and the imports it has run."""
    imports: list[str] = []
    imported = mcp_http._import_sdk

    def counted() -> None:
        imports.append("sdk")
        imported()

    monkeypatch.setattr(mcp_http, "_import_sdk", counted)
    app = mcp_http.create_app(ports=ports, auth=TEST_AUTH)
    return mcp_http._SdkLoader(app.state.api), asyncio.Event(), imports


async def test_the_sdk_waits_its_turn_while_nobody_calls_mcp(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader, turn, imports = _loader_waiting_its_turn(ports, monkeypatch)
    stop = asyncio.Event()
    running_loader = asyncio.create_task(loader.run(stop, turn.wait))

    await asyncio.sleep(0.2)
    assert imports == []  # a first message's loads go first
    turn.set()
    assert await asyncio.wait_for(loader.manager(), LOAD_WAIT_S) is not None
    assert imports == ["sdk"]
    stop.set()
    await running_loader


async def test_a_call_to_mcp_loads_the_sdk_before_its_turn(
    ports: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent that speaks only MCP waits for the SDK and nothing else: its call starts the
    load at once (ADR 0248)."""
    loader, turn, imports = _loader_waiting_its_turn(ports, monkeypatch)
    stop = asyncio.Event()
    running_loader = asyncio.create_task(loader.run(stop, turn.wait))

    manager = await asyncio.wait_for(loader.manager(), LOAD_WAIT_S)

    assert manager is not None
    assert imports == ["sdk"]
    assert not turn.is_set()  # its turn never came
    stop.set()
    await running_loader
