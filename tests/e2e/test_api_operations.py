"""Operations over HTTP: dead letters per tenant (list, retry), subject look-up, and what each
role may not do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, token

from factledger.adapters.deferred_load import DeferredLoad
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.errors import ModelUnavailableError
from factledger.application.sync.types import SyncItem, SyncKind

SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
FOREIGN_ADMIN = bearer(token(Role.ADMIN, tenant="t2"))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
ANALYST = bearer(token(Role.ANALYST))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def dead_letters(
    ports: Runtime, subject_id: UUID, first: int, *, tenant: str = "t1", count: int = 1
) -> list[str]:
    """`count` dead items of one subject, at positions `first`, `first + 1`, ..."""
    store = ports.sync_store
    assert store is not None
    items = [
        SyncItem(f"{p}.0", p, subject_id, SyncKind.TRANSCRIPT, ("doc-1",), tenant=tenant)
        for p in range(first, first + count)
    ]
    assert await store.enqueue(items, after=await store.position(), upto=first + count - 1)
    for item in items:  # one subject's items are claimable one at a time, in order
        claimed = await store.claim("w", limit=10, lease_s=60)
        assert [c.item_id for c in claimed] == [item.item_id]
        await store.fail(item.item_id, error_type="MemoryUnavailableError", retry_in_s=None)
    return [item.item_id for item in items]


async def dead_letter(ports: Runtime, subject_id: UUID, position: int, tenant: str) -> str:
    return (await dead_letters(ports, subject_id, position, tenant=tenant))[0]


async def test_dead_letters_are_listed_and_retried_per_tenant(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    body = {"kind": "lead", "external_ref": "crm-1"}
    ours = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    other_service = bearer(token(Role.SERVICE, tenant="t2"))
    theirs = await ok(await http.post("/v1/subjects", json=body, headers=other_service), 201)
    mine = await dead_letter(ports, UUID(ours["subject_id"]), 1, "t1")
    await dead_letter(ports, UUID(theirs["subject_id"]), 2, "t2")

    listed = await ok(await http.get("/v1/dead-letters", headers=ADMIN))
    assert [d["item_id"] for d in listed["items"]] == [mine]
    assert listed["items"][0]["error_type"] == "MemoryUnavailableError"
    assert (await http.get("/v1/dead-letters", headers=AGENT)).status_code == 403
    foreign = await http.post(f"/v1/dead-letters/{mine}/retry", headers=FOREIGN_ADMIN)
    assert foreign.status_code == 404
    assert (await ok(await http.post(f"/v1/dead-letters/{mine}/retry", headers=ADMIN))) == {
        "retried": 1
    }
    assert (await ok(await http.get("/v1/dead-letters", headers=ADMIN)))["items"] == []
    left = await ok(await http.get("/v1/dead-letters", headers=FOREIGN_ADMIN))
    assert len(left["items"]) == 1
    assert (await ok(await http.post("/v1/dead-letters/retry", headers=FOREIGN_ADMIN))) == {
        "retried": 1
    }
    metrics = (await http.get("/metrics")).text
    assert "factledger_sync_dead_letters 0.0" in metrics


async def test_a_tenant_pages_through_its_dead_letters_behind_another_tenants_thousands(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    body = {"kind": "lead", "external_ref": "crm-1"}
    other_service = bearer(token(Role.SERVICE, tenant="t2"))
    theirs = await ok(await http.post("/v1/subjects", json=body, headers=other_service), 201)
    ours = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    await dead_letters(ports, UUID(theirs["subject_id"]), 1, tenant="t2", count=1200)
    mine = await dead_letters(ports, UUID(ours["subject_id"]), 1201, count=3)

    first = await ok(await http.get("/v1/dead-letters", params={"limit": 2}, headers=ADMIN))
    assert [d["item_id"] for d in first["items"]] == mine[:2]
    after = {"limit": 2, "after": first["next_after"]}
    second = await ok(await http.get("/v1/dead-letters", params=after, headers=ADMIN))
    assert [d["item_id"] for d in second["items"]] == mine[2:]
    assert second["next_after"] is None
    assert await ok(await http.post("/v1/dead-letters/retry", headers=ADMIN)) == {"retried": 3}
    assert (await ok(await http.get("/v1/dead-letters", headers=FOREIGN_ADMIN)))["next_after"] == (
        "100.0"
    )


async def test_subjects_are_looked_up_by_reference_within_the_tenant(
    http: httpx.AsyncClient,
) -> None:
    body = {"kind": "lead", "external_ref": "crm-1"}
    created = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    params = {"kind": "lead", "external_ref": "crm-1"}
    found = await ok(await http.get("/v1/subjects/lookup", params=params, headers=SERVICE))
    assert found["subject_id"] == created["subject_id"]
    elsewhere = await http.get(
        "/v1/subjects/lookup", params=params, headers=bearer(token(Role.SERVICE, tenant="t2"))
    )
    assert elsewhere.status_code == 404


async def test_read_only_and_agent_roles_cannot_write_beyond_their_remit(
    http: httpx.AsyncClient,
) -> None:
    body = {"kind": "lead", "external_ref": "crm-1"}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    path = f"/v1/subjects/{subject['subject_id']}"
    inferred = {"field": "budget", "value": {"type": "number", "value": "3"}, "origin": "inferred"}
    assert (await http.post(f"{path}/proposals", json=inferred, headers=ANALYST)).status_code == 403
    forget = {"field": "budget", "reason": "x"}
    assert (await http.post(f"{path}/forget", json=forget, headers=ANALYST)).status_code == 403
    assert (
        await http.post("/v1/subjects/me/proposals", json=inferred, headers=ADMIN)
    ).status_code == 422
    profile = await http.get(f"{path}/profile", headers=ANALYST)
    assert profile.status_code == 200
    assert (await http.get(f"{path}/events", headers=ANALYST)).status_code == 200


async def test_metrics_count_a_model_whose_load_failed_until_its_retry_loads_it(
    http: httpx.AsyncClient,
) -> None:
    clock, attempts = [0.0], []

    def load() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("the model file is unreadable")
        return "model"

    model = DeferredLoad(load, name="ops_test_model", retry_after_s=30.0, clock=lambda: clock[0])
    with pytest.raises(ModelUnavailableError):
        model.result()
    failing = 'factledger_models_failing{model="ops_test_model"}'
    assert f"{failing} 1.0" in (await http.get("/metrics")).text
    clock[0] += 30.0
    assert model.result() == "model"
    assert f"{failing} 0.0" in (await http.get("/metrics")).text
