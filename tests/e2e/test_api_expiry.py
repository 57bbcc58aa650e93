"""Expiry over HTTP: a memory given a `valid_until` is served until then and not after; the
ledger records the expiry and keeps the memory's history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import httpx
import pytest
from support.api_harness import bearer, token
from support.api_steps import AGENT, a_lead, ok, said, sync

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.memory.record_ids import namespace_for
from factledger.testing.manual_clock import ManualClock

ANALYST = bearer(token(Role.ANALYST))
START = datetime(2026, 3, 3, 10, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


async def recalled(http: httpx.AsyncClient) -> str:
    body = {"query": "Supplier Tamarind"}
    return str(await ok(await http.post("/v1/subjects/me/recall", json=body, headers=AGENT)))


async def a_memory(http: httpx.AsyncClient, ports: Runtime) -> tuple[str, str]:
    """A subject who said which supplier they use; returns (subject id, memory id)."""
    subject_id = await a_lead(http)
    await said(http, "We work with Supplier Tamarind now.")
    await sync(ports)
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(UUID(subject_id)))
    (memory,) = [m for m in memories if "Tamarind" in m.text]
    return subject_id, memory.id


async def test_an_expired_memory_is_served_until_its_time_and_not_after(
    http: httpx.AsyncClient, ports: Runtime, clock: ManualClock
) -> None:
    subject_id, memory_id = await a_memory(http, ports)
    assert "Tamarind" in await recalled(http)
    until = (START + timedelta(days=30)).isoformat()

    url = f"/v1/subjects/me/memories/{memory_id}/expire"
    expired = await ok(await http.post(url, json={"valid_until": until}, headers=AGENT))
    again = await ok(await http.post(url, json={"valid_until": until}, headers=AGENT))
    await sync(ports)

    assert (expired["applied"], again["applied"]) == (True, False)
    assert "Tamarind" in await recalled(http)
    clock.advance(timedelta(days=31))
    assert "Tamarind" not in await recalled(http)
    # the ledger keeps the expiry: who, which memory, until when
    events = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ANALYST))
    (expiry,) = [e for e in events["events"] if e["topic"].endswith("memory_expiry_set.v1")]
    assert expiry["payload"]["memory_id"] == memory_id
    assert expiry["payload"]["valid_until"].startswith("2026-04-02")


async def test_an_expiry_needs_a_time_zone_and_a_valid_memory_id(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    await a_memory(http, ports)

    naive = await http.post(
        "/v1/subjects/me/memories/mem-1/expire",
        json={"valid_until": "2026-06-30T00:00:00"},
        headers=AGENT,
    )
    bad_id = await http.post(
        "/v1/subjects/me/memories/bad%20id/expire",
        json={"valid_until": "2026-06-30T00:00:00Z"},
        headers=AGENT,
    )

    assert (naive.status_code, bad_id.status_code) == (422, 422)


REVIEWER = bearer(token(Role.REVIEWER))


async def a_confirmed_supplier(http: httpx.AsyncClient) -> str:
    """A subject whose profile holds `supplier` (stated, approved); returns the subject id."""
    sid = await a_lead(http)
    await said(http, "We work with Supplier Tamarind now.")
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier Tamarind"},
        "origin": "stated",
        "evidence": {"session_id": "wa-1", "message_index": 0, "quote": "Supplier Tamarind"},
    }
    change = await ok(
        await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT), 201
    )
    url = f"/v1/subjects/{sid}/proposals/{change['change_id']}/approve"
    await ok(await http.post(url, json={}, headers=REVIEWER))
    return sid


async def profile_context(http: httpx.AsyncClient) -> str:
    out = await ok(await http.post("/v1/subjects/me/context", json={}, headers=AGENT))
    return str(out["profile"])


async def test_an_expired_field_leaves_context_and_stays_in_the_profile_and_history(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    subject_id = await a_confirmed_supplier(http)
    assert "Tamarind" in await profile_context(http)
    until = START + timedelta(days=30)
    url = "/v1/subjects/me/profile/fields/supplier/expire"
    body = {"valid_until": until.isoformat(), "reason": "contract ends"}
    headers = {**AGENT, "Idempotency-Key": "expire-field-0001"}

    first = await http.post(url, json=body, headers=headers)
    replay = await http.post(url, json=body, headers=headers)
    again = await ok(await http.post(url, json=body, headers=AGENT))

    assert (await ok(first))["applied"] is True
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.json() == first.json()
    assert again["applied"] is False
    profile_url = f"/v1/subjects/{subject_id}/profile"
    served = (await ok(await http.get(profile_url, headers=ANALYST)))["fields"]["supplier"]
    assert (served["valid_until"][:10], served["expired"]) == ("2026-04-02", False)
    assert "Tamarind" in await profile_context(http)

    clock.advance(timedelta(days=31))

    assert "Tamarind" not in await profile_context(http)
    kept = (await ok(await http.get(profile_url, headers=ANALYST)))["fields"]["supplier"]
    assert (kept["display"], kept["expired"]) == ("Supplier Tamarind", True)
    history = await ok(await http.get(f"{profile_url}/history?field=supplier", headers=ANALYST))
    assert [e["kind"] for e in history["entries"]] == ["set", "expiry"]
    assert history["entries"][1]["valid_until"].startswith("2026-04-02")
    events = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ANALYST))
    (expiry,) = [e for e in events["events"] if e["topic"].endswith("field_expiry_set.v1")]
    assert (expiry["payload"]["field"], expiry["payload"]["reason"]) == (
        "supplier",
        "contract ends",
    )


async def test_a_field_expiry_needs_a_time_zone_and_a_field_the_profile_holds(
    http: httpx.AsyncClient,
) -> None:
    await a_confirmed_supplier(http)

    naive = await http.post(
        "/v1/subjects/me/profile/fields/supplier/expire",
        json={"valid_until": "2026-06-30T00:00:00"},
        headers=AGENT,
    )
    absent = await http.post(
        "/v1/subjects/me/profile/fields/budget/expire",
        json={"valid_until": "2026-06-30T00:00:00Z"},
        headers=AGENT,
    )
    bad_name = await http.post(
        "/v1/subjects/me/profile/fields/Bad-Name/expire",
        json={"valid_until": "2026-06-30T00:00:00Z"},
        headers=AGENT,
    )

    assert naive.status_code == 422
    assert naive.json()["field"] == "valid_until"
    assert "2026-06-30" not in naive.text  # errors never echo the input
    assert (absent.status_code, absent.json()["error"]) == (404, "FieldNotHeldError")
    assert bad_name.status_code == 422
