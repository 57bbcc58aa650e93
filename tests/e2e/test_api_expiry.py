"""Expiry over HTTP: a memory given a `valid_until` is served until then and not after; the
ledger records the expiry and keeps the memory's history."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.ids import namespace_for
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
ANALYST = bearer(token(Role.ANALYST))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
START = datetime(2026, 3, 3, 10, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def ports(clock: ManualClock) -> Runtime:
    return build_ports(clock)


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def sync(ports: Runtime) -> None:
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    report = await SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend)).run_once()
    assert report.dead == 0


async def recalled(http: httpx.AsyncClient) -> str:
    body = {"query": "Supplier Tamarind"}
    return str(await ok(await http.post("/v1/subjects/me/recall", json=body, headers=AGENT)))


async def a_memory(http: httpx.AsyncClient, ports: Runtime) -> tuple[str, str]:
    """A subject who said which supplier they use; returns (subject id, memory id)."""
    body = {"kind": "lead", "external_ref": "crm-1"}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    start = {"session_id": "wa-1", "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    message = {"role": "subject", "text": "We work with Supplier Tamarind now."}
    await ok(await http.post("/v1/subjects/me/sessions/wa-1/messages", json=message, headers=AGENT))
    await ok(await http.post("/v1/subjects/me/sessions/wa-1/end", json={}, headers=AGENT))
    await sync(ports)
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(UUID(subject["subject_id"])))
    (memory,) = [m for m in memories if "Tamarind" in m.text]
    return str(subject["subject_id"]), memory.id


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
