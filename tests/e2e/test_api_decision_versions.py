"""A decision answers the profile version it created, however many decide at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.domain.events import ChangeConfirmed

REF = "crm-decide"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=REF, principal_id="wa-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
DECISIONS = 20


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def session(http: httpx.AsyncClient, session_id: str, proposals: list[Any]) -> Any:
    start = {"session_id": session_id, "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    for i in range(DECISIONS):
        message = {"role": "subject", "text": f"Yes, field {i} is right."}
        url = f"/v1/subjects/me/sessions/{session_id}/messages"
        await ok(await http.post(**line(url, message, AGENT)))
    url = f"/v1/subjects/me/sessions/{session_id}/end"
    return await ok(await http.post(url, json={"proposals": proposals}, headers=AGENT))


async def pending_changes(http: httpx.AsyncClient) -> tuple[str, list[str]]:
    """A subject with DECISIONS pending changes, each on its own field (so no decision is
    stale against another), and a later session in which the subject's words confirm them."""
    body = {"kind": "lead", "external_ref": REF}
    registered = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    proposals = [
        {
            "field": f"field_{i}",
            "value": {"type": "text", "value": f"value {i}"},
            "origin": "inferred",
            "rationale": "said so",
        }
        for i in range(DECISIONS)
    ]
    ended = await session(http, "wa-1", proposals)
    await session(http, "wa-2", [])
    return str(registered["subject_id"]), [p["change_id"] for p in ended["proposals"]]


async def decide(http: httpx.AsyncClient, subject_id: str, i: int, change_id: str) -> Any:
    # A subject's yes is recorded with the session that heard it (the agent asks, the channel
    # relays the answer), so the decisions made at once by callers are the reviewers'.
    url = f"/v1/subjects/{subject_id}/proposals/{change_id}/approve"
    return await ok(await http.post(url, json={"note": f"checked {i}"}, headers=REVIEWER))


async def test_concurrent_decisions_each_answer_the_version_they_created(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    # Given twenty pending changes on one subject
    subject_id, changes = await pending_changes(http)

    # When all twenty are decided at once
    answers = await asyncio.gather(
        *(decide(http, subject_id, i, change) for i, change in enumerate(changes))
    )

    # Then every answer names its own version: distinct, dense, and the one its event created
    versions = [a["profile_version"] for a in answers]
    assert sorted(versions) == list(range(1, DECISIONS + 1))
    created = {
        str(e.change_id): e.profile_version
        for e in ports.ledger.repository.event_store.get(
            ports.ledger.subject_id_for("t1", "lead", REF)
        )
        if isinstance(e, ChangeConfirmed)
    }
    assert {a["change_id"]: a["profile_version"] for a in answers} == created


async def test_a_retry_after_its_saved_answer_expired_names_the_version_it_created(
    ports: Runtime,
) -> None:
    # Saved answers that expire at once: the retry reaches the ledger, which drops it as a
    # command it has already applied, and the answer is rebuilt from the subject.
    forgetful = InMemoryIdempotencyStore(ttl_s=1e-9)
    app = create_app(ports=replace(ports, idempotency=forgetful), auth=TEST_AUTH)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        subject_id, changes = await pending_changes(http)
        keyed = {**REVIEWER, "Idempotency-Key": "approve-field-1"}
        url = f"/v1/subjects/{subject_id}/proposals/{changes[1]}/approve"
        first = await ok(await http.post(url, json={}, headers=keyed))
        await decide(http, subject_id, 3, changes[3])  # the profile moves on to version 2

        again = await ok(await http.post(url, json={}, headers=keyed))

    assert (first["profile_version"], first["applied"]) == (1, True)
    assert (again["profile_version"], again["applied"]) == (1, False)
