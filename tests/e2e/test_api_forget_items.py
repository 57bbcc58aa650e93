"""Over HTTP, a request to forget one item of a list (ADR 0160): a caller proposes `forget`
with the items, a reviewer approves it, the profile keeps the other items, the field's history
says it was forgotten and what it kept, nothing the API serves names the forgotten item, and
the backend keeps no memory of it. A request naming an item the list does not hold is a 422
that names `value`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, token
from support.api_steps import AGENT, a_lead, ok, said, sync

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.memory.record_ids import namespace_for
from factledger.testing.manual_clock import ManualClock

REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
NAMED = "We mostly lose deals to Acme, Quillotron and Zorb."
ASKS = "Please delete what I told you about Quillotron."


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))


def items(*names: str) -> dict[str, Any]:
    return {"type": "list", "items": list(names)}


async def approve(http: httpx.AsyncClient, subject_id: str, body: dict[str, Any]) -> Any:
    made = await ok(await http.post("/v1/subjects/me/proposals", json=body, headers=AGENT), 201)
    url = f"/v1/subjects/{subject_id}/proposals/{made['change_id']}/approve"
    return await ok(await http.post(url, json={}, headers=REVIEWER))


async def competing(http: httpx.AsyncClient, ports: Runtime) -> str:
    subject_id = await a_lead(http)
    await said(http, NAMED)
    await approve(
        http,
        subject_id,
        {
            "field": "competitors",
            "value": items("Acme", "Quillotron", "Zorb"),
            "origin": "stated",
            "evidence": {"session_id": "wa-1", "message_index": 0, "quote": NAMED},
        },
    )
    await sync(ports)
    return subject_id


def request(*names: str) -> dict[str, Any]:
    return {
        "field": "competitors",
        "operation": "forget",
        "value": items(*names),
        "origin": "stated",
        "evidence": {"session_id": "wa-2", "message_index": 0, "quote": ASKS},
        "based_on_version": 1,
    }


async def test_approving_forgets_the_item_and_keeps_the_others(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await competing(http, ports)
    assert ports.backend is not None
    ns = namespace_for(UUID(subject_id))
    assert any("Quillotron" in m.text for m in await ports.backend.list_memories(ns))
    await said(http, ASKS, session_id="wa-2")

    decided = await approve(http, subject_id, request("quillotron"))
    assert decided["profile_version"] == 2

    profile = await ok(await http.get("/v1/subjects/me/profile", headers=AGENT))
    assert profile["fields"]["competitors"]["value"] == items("Acme", "Zorb")
    history = await ok(
        await http.get(f"/v1/subjects/{subject_id}/profile/history", headers=REVIEWER)
    )
    assert [(h["kind"], h["display"]) for h in history["entries"]] == [
        ("set", "[forgotten]"),
        ("forgotten", None),
        ("kept", "Acme, Zorb"),
    ]
    served = [
        await http.get(f"/v1/subjects/{subject_id}/events", headers=REVIEWER),
        await http.get(f"/v1/subjects/{subject_id}/profile/versions/1", headers=REVIEWER),
        await http.get(f"/v1/subjects/{subject_id}/profile/versions/2", headers=REVIEWER),
        await http.get("/v1/proposals/pending", headers=REVIEWER),
    ]
    for response in served:
        assert response.status_code == 200, response.text
        assert "Quillotron" not in response.text
    await sync(ports)
    assert not any("Quillotron" in m.text for m in await ports.backend.list_memories(ns))


async def test_a_request_naming_an_item_not_held_is_a_422_naming_value(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    await competing(http, ports)
    await said(http, ASKS, session_id="wa-2")
    response = await http.post("/v1/subjects/me/proposals", json=request("Brisk"), headers=AGENT)
    assert response.status_code == 422, response.text
    assert "forget: value: competitors does not hold Brisk" in response.json()["detail"]


async def test_a_forget_asked_directly_may_name_items(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await competing(http, ports)
    body = {"field": "competitors", "reason": "the subject asked", "items": ["Quillotron"]}
    done = await ok(await http.post("/v1/subjects/me/forget", json=body, headers=AGENT))
    assert (done["field"], done["profile_version"]) == ("competitors", 2)
    profile = await ok(await http.get("/v1/subjects/me/profile", headers=AGENT))
    assert profile["fields"]["competitors"]["value"] == items("Acme", "Zorb")
    events = await http.get(f"/v1/subjects/{subject_id}/events", headers=REVIEWER)
    assert "Quillotron" not in events.text

    alone = {"memory_id": "m-1", "reason": "the subject asked", "items": ["Acme"]}
    response = await http.post("/v1/subjects/me/forget", json=alone, headers=AGENT)
    assert response.status_code == 422, response.text
    assert "items" in response.text
    assert "needs `field`" in response.text
