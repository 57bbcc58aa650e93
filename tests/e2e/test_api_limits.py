"""Over HTTP, a limit the domain draws is a 422 naming the field; two limits had drifted from
the domain's (a message index past a session's last message, a memory id longer than the
memory port takes) and were accepted, only to fail later."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.domain.sessions import MAX_MESSAGES
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def subject_path(http: httpx.AsyncClient) -> str:
    body = {"kind": "lead", "external_ref": "crm-1"}
    created = await http.post("/v1/subjects", json=body, headers=SERVICE)
    assert created.status_code == 201, created.text
    return f"/v1/subjects/{created.json()['subject_id']}"


def refused_field(response: httpx.Response) -> Any:
    assert response.status_code == 422, response.text
    return response.json()["field"]


async def test_a_message_index_no_session_can_hold_is_a_422(http: httpx.AsyncClient) -> None:
    path = await subject_path(http)
    evidence = {"session_id": "s-1", "message_index": MAX_MESSAGES, "quote": "Supplier A"}
    body = {"field": "supplier", "value": {"type": "text", "value": "A"}, "origin": "stated"}
    response = await http.post(
        f"{path}/proposals", json={**body, "evidence": evidence}, headers=SERVICE
    )
    assert refused_field(response) == "evidence.message_index"
    evidence["message_index"] = MAX_MESSAGES - 1  # a valid index: the domain looks it up
    response = await http.post(
        f"{path}/proposals", json={**body, "evidence": evidence}, headers=SERVICE
    )
    assert response.json()["error"] == "EvidenceNotFoundError", response.text


async def test_a_memory_id_longer_than_the_memory_port_takes_is_a_422(
    http: httpx.AsyncClient,
) -> None:
    path = await subject_path(http)
    forget = {"memory_id": "m" * 101, "reason": "the subject asked"}
    assert refused_field(await http.post(f"{path}/forget", json=forget, headers=SERVICE)) == (
        "memory_id"
    )
    forget["memory_id"] = "m" * 100
    response = await http.post(f"{path}/forget", json=forget, headers=SERVICE)
    assert response.status_code == 200, response.text


async def test_forget_with_both_or_neither_id_says_which_to_send(http: httpx.AsyncClient) -> None:
    path = await subject_path(http)
    both = {"field": "supplier", "memory_id": "m-1", "reason": "the subject asked"}
    refused = await http.post(f"{path}/forget", json=both, headers=SERVICE)
    assert refused_field(refused) == "memory_id"
    assert refused.json()["detail"] == (
        "memory_id: send `field` to forget a profile field or `memory_id` to forget one "
        "memory, not both (two forgets for both)"
    )
    neither = await http.post(f"{path}/forget", json={"reason": "asked"}, headers=SERVICE)
    assert refused_field(neither) == "field"
    assert neither.json()["detail"].startswith("field: is required: send `field` to forget")
