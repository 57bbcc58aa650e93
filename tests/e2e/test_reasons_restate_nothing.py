"""Issue 34, class 1 (reasons): a forget's or an erasure's reason that says again what it
forgets ("forget that my budget is 40k") is refused with a 422 naming `reason`, and nothing is
forgotten or recorded; said in other words ("the subject asked") it goes through. Field forgets,
memory forgets and erasures, through the HTTP API, MCP and the console, on the embedded default
(SQLite files) and on PostgreSQL + pgvector."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from support.api_harness import TEST_AUTH, asgi_client, token
from support.console_seed import csrf_of, sign_in
from support.forgotten_words import (
    ADMIN,
    BACKENDS,
    KEPT,
    SERVICE,
    STATED,
    backend_settings,
    client,
    memory_drawn_from,
    ok,
    serving,
    talk,
)
from support.mcp_story import call, error

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app as console_app
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.mcp.server import build_server
from factledger.api.settings import RateLimitSettings, Settings

from .test_keyed_fingerprints import stored_anywhere

# The budget line carries the amount in one spelling; the refused reasons in others.
SAID = [f"Our budget is {STATED}, about 40,000 euros.", f"We buy from {KEPT} now."]
RESTATING = (
    "forget that my budget is 40k",
    f"forget {STATED.lower()}!",
)
CALM = "the subject asked"


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


def refused(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["field"] == "reason", body
    assert "40" not in body["detail"]
    assert STATED not in body["detail"]


async def test_the_api_refuses_a_reason_that_restates_the_field_memory_or_subject(
    settings: Settings,
) -> None:
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await talk(http, "crm-reasons", "wa-r", SAID)
        url = f"/v1/subjects/{sid}/forget"
        for reason in RESTATING:
            refused(
                await http.post(url, json={"field": "budget", "reason": reason}, headers=SERVICE)
            )
        memory = await memory_drawn_from(rt, sid, KEPT)
        memory_reason = f"no longer buys from {KEPT.upper()}"
        refused(
            await http.post(
                url, json={"memory_id": memory, "reason": memory_reason}, headers=SERVICE
            )
        )
        erase_reason = f"erase; they bought from {KEPT}"
        refused(
            await http.request(
                "DELETE", f"/v1/subjects/{sid}", json={"reason": erase_reason}, headers=ADMIN
            )
        )
        profile = await ok(await http.get(f"/v1/subjects/{sid}/profile", headers=SERVICE))
        assert {"budget", "supplier"} <= set(profile["fields"]), profile  # nothing forgotten

        await ok(await http.post(url, json={"field": "budget", "reason": CALM}, headers=SERVICE))
        await ok(await http.post(url, json={"memory_id": memory, "reason": CALM}, headers=SERVICE))
        body = {"reason": "erasure request 2026-14"}
        await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=body, headers=ADMIN))
    for reason in (*RESTATING, memory_reason, erase_reason):
        assert stored_anywhere(settings, reason) == [], reason


async def test_mcp_refuses_a_reason_that_restates_the_field(settings: Settings) -> None:
    jwt = token(Role.AGENT, kind="lead", ref="crm-mcp-r", principal_id="voice-bot")
    async with serving(settings) as (api, rt):
        async with client(api) as http:
            await talk(http, "crm-mcp-r", "wa-m", SAID)
        app = create_app(ports=rt, auth=TEST_AUTH)
        verifier = TokenVerifier(TEST_AUTH)
        async with Client(build_server(app.state.api, lambda _: verifier.verify(jwt))) as mcp:
            result = await call(mcp, "forget", field="budget", reason=RESTATING[0])
            assert error(result)["field"] == "reason"
            result = await call(mcp, "forget", field="budget", reason=CALM)
            assert not result.is_error, result.content


@asynccontextmanager
async def console_on(rt: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    app = console_app(ports=rt, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    async with asgi_client(app) as web:
        await sign_in(web, Role.ADMIN, tenant="t1")
        yield web


async def console_forget(web: httpx.AsyncClient, sid: str, **what: str) -> httpx.Response:
    query = "&".join(f"{k}={v}" for k, v in what.items() if k != "reason")
    confirm = await web.get(f"/console/subjects/{sid}/forget?{query}")
    assert confirm.status_code == 200, confirm.text
    form: dict[str, Any] = {"csrf": csrf_of(confirm.text), "nonce": "k" * 24, **what}
    return await web.post(f"/console/subjects/{sid}/forget", data=form)


async def test_the_console_refuses_a_reason_that_restates_the_field(settings: Settings) -> None:
    async with serving(settings) as (api, rt):
        async with client(api) as http:
            sid = await talk(http, "crm-console-r", "wa-c", SAID)
        async with console_on(rt) as web:
            answer = await console_forget(web, sid, field="budget", reason=RESTATING[0])
            assert answer.status_code == 422, answer.text
            assert "reason" in answer.text
            assert "40k" not in answer.text
            answer = await console_forget(web, sid, field="budget", reason=CALM)
            assert answer.status_code == 303, answer.text
