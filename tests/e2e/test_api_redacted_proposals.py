"""A proposal of a forgotten field stays readable, redacted: every role that may read single
proposals (ADR 0010: not analysts, who read the feed) gets a 200 with its content null and
`redacted: true`. The response model once required the erased rationale: every read was a 500."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
READERS = {
    "agent": bearer(token(Role.AGENT, kind="lead", ref="crm-1")),
    "service": SERVICE,
    "reviewer": REVIEWER,
    "admin": bearer(token(Role.ADMIN)),
}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def propose(http: httpx.AsyncClient, path: str, value: str, version: int) -> str:
    body = {
        "field": "supplier",
        "value": {"type": "text", "value": value},
        "origin": "inferred",
        "condition": "if the pricing works",
        "rationale": "mentioned twice",
        "based_on_version": version,
    }
    created = await ok(await http.post(f"{path}/proposals", json=body, headers=SERVICE), 201)
    return str(created["change_id"])


async def forgotten_proposals(http: httpx.AsyncClient) -> tuple[str, list[str]]:
    """A confirmed and a pending proposal of `supplier`, then the field forgotten."""
    body = {"kind": "lead", "external_ref": "crm-1"}
    created = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    path = f"/v1/subjects/{created['subject_id']}"
    confirmed = await propose(http, path, "Supplier A", 0)
    await ok(await http.post(f"{path}/proposals/{confirmed}/approve", json={}, headers=REVIEWER))
    pending = await propose(http, path, "Supplier B", 1)
    forget = {"field": "supplier", "reason": "the subject asked"}
    await ok(await http.post(f"{path}/forget", json=forget, headers=SERVICE))
    return path, [confirmed, pending]


@pytest.mark.parametrize("role", sorted(READERS))
async def test_every_reader_gets_a_forgotten_fields_proposals_redacted(
    http: httpx.AsyncClient, role: str
) -> None:
    path, change_ids = await forgotten_proposals(http)
    statuses = []
    for change_id in change_ids:
        read = await ok(await http.get(f"{path}/proposals/{change_id}", headers=READERS[role]))
        assert read["redacted"] is True
        assert [read[k] for k in ("value", "condition", "evidence", "rationale")] == [None] * 4
        assert read["field"] == "supplier"
        statuses.append(read["status"])
    assert statuses == ["confirmed", "forgotten"]


async def test_a_proposal_made_after_the_forget_is_readable_again(
    http: httpx.AsyncClient,
) -> None:
    path, _ = await forgotten_proposals(http)
    change_id = await propose(http, path, "Supplier C", 2)
    read = await ok(await http.get(f"{path}/proposals/{change_id}", headers=SERVICE))
    assert read["redacted"] is False
    assert (read["value"]["value"], read["rationale"]) == ("Supplier C", "mentioned twice")
