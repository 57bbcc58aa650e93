"""A session end and a decision load their subject once; every command's answer says how
long its use case and its idempotency record took (`Server-Timing`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, line, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.bench.load.agent import server_timing

REF = "crm-single-load"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=REF, principal_id="wa-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
SESSIONS = "/v1/subjects/me/sessions"


@pytest.fixture
def loads(ports: Runtime, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts full loads of a subject (`repository.get` without a version)."""
    counted: list[int] = []
    repository = ports.ledger.repository
    original: Callable[..., Any] = repository.get

    def get(aggregate_id: Any, **kwargs: Any) -> Any:
        if kwargs.get("version") is None:
            counted.append(1)
        return original(aggregate_id, **kwargs)

    monkeypatch.setattr(repository, "get", get)
    return counted


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def started_session(http: httpx.AsyncClient, session_id: str) -> None:
    await ok(
        await http.post(
            SESSIONS, json={"session_id": session_id, "channel": "chat"}, headers=AGENT
        ),
        201,
    )


async def ended_session(http: httpx.AsyncClient, session_id: str, *, started: bool = False) -> Any:
    if not started:
        await started_session(http, session_id)
    said = {"role": "subject", "text": "We buy from Acme."}
    await ok(await http.post(**line(f"{SESSIONS}/{session_id}/messages", said, AGENT)))
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Acme"},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": 0, "quote": "Acme"},
    }
    url = f"{SESSIONS}/{session_id}/end"
    return await http.post(url, json={"proposals": [proposal]}, headers=AGENT)


async def registered(http: httpx.AsyncClient) -> str:
    body = {"kind": "lead", "external_ref": REF}
    return str(
        (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))["subject_id"]
    )


async def test_a_session_end_loads_its_subject_once(
    http: httpx.AsyncClient, loads: list[int]
) -> None:
    await registered(http)
    loads.clear()
    await started_session(http, "s-1")
    assert len(loads) == 1  # a start refuses an erased subject (410), from the ledger
    loads.clear()
    ended = await ok(await ended_session(http, "s-1", started=True))
    assert ended["proposals"][0]["status"] == "pending"
    assert len(loads) == 1  # the appends read nothing; the end loads once


async def test_a_decision_loads_its_subject_once(http: httpx.AsyncClient, loads: list[int]) -> None:
    subject_id = await registered(http)
    change_id = (await ok(await ended_session(http, "s-1")))["proposals"][0]["change_id"]
    loads.clear()
    url = f"/v1/subjects/{subject_id}/proposals/{change_id}/approve"
    decided = await ok(await http.post(url, json={}, headers=REVIEWER))
    assert (decided["status"], decided["applied"], decided["profile_version"]) == (
        "confirmed",
        True,
        1,
    )
    assert len(loads) == 1


async def test_an_end_retried_with_other_proposals_is_a_conflict(
    http: httpx.AsyncClient,
) -> None:
    await registered(http)
    first = await ok(await ended_session(http, "s-1"))
    other = {
        "field": "budget",
        "value": {"type": "text", "value": "900 EUR"},
        "origin": "stated",
        "evidence": {"session_id": "s-1", "message_index": 0, "quote": "Acme"},
    }
    url = f"{SESSIONS}/s-1/end"
    # A proposal the recorded end did not make (change ids follow the proposals' order).
    conflict = await http.post(url, json={"proposals": [other, other]}, headers=AGENT)
    assert conflict.status_code == 409, conflict.text
    assert conflict.json()["error"] == "SessionConflictError"
    same = await ok(await ended_session_again(http, "s-1"))
    assert same["proposals"] == first["proposals"]


async def ended_session_again(http: httpx.AsyncClient, session_id: str) -> httpx.Response:
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Acme"},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": 0, "quote": "Acme"},
    }
    url = f"{SESSIONS}/{session_id}/end"
    return await http.post(url, json={"proposals": [proposal]}, headers=AGENT)


async def test_the_answer_times_the_use_case_and_the_idempotency_record(
    http: httpx.AsyncClient,
) -> None:
    await registered(http)
    await ok(
        await http.post(SESSIONS, json={"session_id": "s-1", "channel": "chat"}, headers=AGENT), 201
    )
    said = {"role": "subject", "text": "Hello."}
    keyed = {**AGENT, "Idempotency-Key": "key-timing-1"}
    response = await http.post(**line(f"{SESSIONS}/s-1/messages", said, keyed))
    timing = server_timing(response.headers["server-timing"])
    assert set(timing) == {"app", "use", "idem"}
    assert 0 <= timing["use"] + timing["idem"] <= timing["app"]
    unkeyed = await http.post(**line(f"{SESSIONS}/s-1/messages", said, AGENT))
    assert set(server_timing(unkeyed.headers["server-timing"])) == {"app", "use"}
    read = await http.get(f"{SESSIONS}/s-1", headers=AGENT)
    assert set(server_timing(read.headers["server-timing"])) == {"app"}


async def test_a_command_is_admitted_by_the_rate_limits_once(ports: Runtime) -> None:
    """Three dependencies of an append ask for the principal: it is verified, and counted
    against its burst, once per request."""
    limits = RateLimitSettings(
        principal_per_s=0.001, principal_burst=5, tenant_per_s=0.001, tenant_burst=100
    )
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=limits)
    async with asgi_client(app) as http:
        await registered(http)
        start = {"session_id": "s-1", "channel": "chat"}
        await ok(await http.post(SESSIONS, json=start, headers=AGENT), 201)
        said = {"role": "agent", "text": "Hello."}
        url = f"{SESSIONS}/s-1/messages"
        statuses = [(await http.post(**line(url, said, AGENT))).status_code for _ in range(5)]
        assert statuses == [200, 200, 200, 200, 429]
