"""Over HTTP, a list field's items are taken off one by one (ADR 0159): a caller proposes a
`remove`, a reviewer approves it, the profile keeps the other items and the field's history
says what was removed; a removal from a field that holds no list, or one without its items,
is a 422 that names what is wrong."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="patient", ref="p-17"))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-2"))
ANALYST = bearer(token(Role.ANALYST))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)) as client:
        body = {"kind": "patient", "external_ref": "p-17"}
        assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).status_code == 201
        yield client


def items(*names: str) -> dict[str, Any]:
    return {"type": "list", "items": list(names)}


async def approved(http: httpx.AsyncClient, proposal: dict[str, Any]) -> dict[str, Any]:
    made = await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT)
    assert made.status_code == 201, made.text
    change_id = made.json()["change_id"]
    url = f"/v1/subjects/{made.json()['subject_id']}/proposals/{change_id}/approve"
    decided = await http.post(url, json={}, headers=REVIEWER)
    assert decided.status_code == 200, decided.text
    body: dict[str, Any] = decided.json()
    return body


async def test_a_removal_takes_its_items_off_and_keeps_the_others(
    http: httpx.AsyncClient,
) -> None:
    medications = items("metformin", "atorvastatin", "aspirin")
    base = {"field": "medications", "origin": "inferred", "rationale": "intake form"}
    await approved(http, {**base, "operation": "append", "value": medications})
    removal = {**base, "operation": "remove", "value": items("Aspirin"), "based_on_version": 1}
    assert (await approved(http, removal))["profile_version"] == 2

    profile = (await http.get("/v1/subjects/me/profile", headers=AGENT)).json()
    assert profile["fields"]["medications"]["value"] == items("metformin", "atorvastatin")
    history = (await http.get("/v1/subjects/me/profile/history", headers=AGENT)).json()
    assert [h["kind"] for h in history["entries"]] == ["append", "remove"]


async def test_a_removal_that_does_not_fit_is_a_422_naming_it(http: httpx.AsyncClient) -> None:
    base = {"field": "insurer", "origin": "inferred"}
    await approved(http, {**base, "value": {"type": "text", "value": "Pacifica"}})

    from_text = {**base, "operation": "remove", "value": items("Pacifica"), "based_on_version": 1}
    response = await http.post("/v1/subjects/me/proposals", json=from_text, headers=AGENT)
    assert response.status_code == 422, response.text
    assert "remove: the field does not hold a list" in response.json()["detail"]

    bare = {"field": "medications", "origin": "inferred", "operation": "remove"}
    response = await http.post("/v1/subjects/me/proposals", json=bare, headers=AGENT)
    assert response.status_code == 422, response.text
    assert "remove: needs a list value" in response.json()["detail"]
