"""Erasure over HTTP: `DELETE /v1/subjects/{id}` (admins only, with a reason) and what a forget
or an erasure leaves of the saved responses of idempotency keys."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
FOREIGN_ADMIN = bearer(token(Role.ADMIN, tenant="t2"))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
CANARY = "Quetzal Marmalade 7731"


@pytest.fixture
def idempotency_file(tmp_path: Path) -> Path:
    return tmp_path / "idempotency.sqlite"


@pytest.fixture
async def http(idempotency_file: Path) -> AsyncIterator[httpx.AsyncClient]:
    store = SqliteIdempotencyStore(idempotency_file)
    ports: Runtime = replace(build_ports(ManualClock()), idempotency=store)
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client
    store.close()


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def keyed(key: str, headers: dict[str, str] = AGENT) -> dict[str, str]:
    return {**headers, "Idempotency-Key": key}


async def subject_with_canary(http: httpx.AsyncClient) -> str:
    """A subject whose supplier (confirmed) and a pending proposal hold the canary, each
    written with an idempotency key, so their responses are saved."""
    body = {"kind": "lead", "external_ref": "crm-1"}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": CANARY},
        "origin": "inferred",
        "condition": f"only while {CANARY} lasts",
        "rationale": "the agent inferred it",
        "based_on_version": 0,
    }
    url = "/v1/subjects/me/proposals"
    proposed = await ok(await http.post(url, json=proposal, headers=keyed("propose-0001")), 201)
    approve = f"/v1/subjects/{subject['subject_id']}/proposals/{proposed['change_id']}/approve"
    await ok(await http.post(approve, json={}, headers=keyed("approve-0001", ADMIN)))
    return str(subject["subject_id"])


def canary_in_files(directory: Path) -> list[str]:
    files = [f for f in directory.iterdir() if f.is_file()]
    return [f.name for f in files if CANARY.encode() in f.read_bytes()]


async def test_forgetting_a_field_deletes_the_saved_responses_that_held_it(
    http: httpx.AsyncClient, idempotency_file: Path
) -> None:
    await subject_with_canary(http)
    assert canary_in_files(idempotency_file.parent) != []

    forget = {"field": "supplier", "reason": "the subject asked"}
    await ok(await http.post("/v1/subjects/me/forget", json=forget, headers=keyed("forget-0001")))

    assert canary_in_files(idempotency_file.parent) == []


async def test_an_admin_erases_a_subject_and_it_answers_410_afterwards(
    http: httpx.AsyncClient, idempotency_file: Path
) -> None:
    subject_id = await subject_with_canary(http)
    url = f"/v1/subjects/{subject_id}"

    erased = await ok(
        await http.request("DELETE", url, json={"reason": "erasure request 4411"}, headers=ADMIN)
    )

    assert erased == {"subject_id": subject_id, "applied": True, "erased": True}
    assert canary_in_files(idempotency_file.parent) == []
    gone = await http.get(url, headers=ADMIN)
    assert (gone.status_code, gone.json()["error"]) == (410, "SubjectErasedError")
    assert (await http.get("/v1/subjects/me", headers=AGENT)).status_code == 410
    assert (await http.get("/v1/subjects/me/profile", headers=AGENT)).status_code == 404
    lookup = {"kind": "lead", "external_ref": "crm-1"}
    assert (await http.get("/v1/subjects/lookup", params=lookup, headers=ADMIN)).status_code == 410
    forget = {"field": "supplier", "reason": "again"}
    refused = await http.post("/v1/subjects/me/forget", json=forget, headers=AGENT)
    assert (refused.status_code, refused.json()["error"]) == (410, "SubjectErasedError")
    # the receipt: who and when; no content, and not the reason either (it was sealed under
    # the subject's key, which the erasure deleted: a reason may name the person)
    events = await ok(await http.get(f"{url}/events", headers=ADMIN))
    receipt = events["events"][-1]
    assert receipt["topic"] == "factledger.subject.erased.v1"
    assert receipt["payload"]["requested_by"] == {"kind": "staff", "id": "admin-1"}
    assert receipt["payload"]["reason"] is None
    assert CANARY not in str(events)


async def test_erasing_again_is_410_and_a_retry_with_its_key_replays(
    http: httpx.AsyncClient,
) -> None:
    subject_id = await subject_with_canary(http)
    url = f"/v1/subjects/{subject_id}"
    body = {"reason": "erasure request 4411"}

    headers = keyed("erase-0001", ADMIN)
    first = await ok(await http.request("DELETE", url, json=body, headers=headers))
    retry = await http.request("DELETE", url, json=body, headers=headers)
    again = await http.request("DELETE", url, json=body, headers=ADMIN)

    assert retry.status_code == 200
    assert retry.json() == first
    assert again.status_code == 410


@pytest.mark.parametrize(
    "role", [Role.AGENT, Role.SERVICE, Role.REVIEWER, Role.ANALYST], ids=lambda r: r.value
)
async def test_only_admins_may_erase(http: httpx.AsyncClient, role: Role) -> None:
    subject_id = await subject_with_canary(http)
    bound = {"kind": "lead", "ref": "crm-1"} if role is Role.AGENT else {}
    headers = bearer(token(role, **bound))
    url = f"/v1/subjects/{subject_id}"

    refused = await http.request("DELETE", url, json={"reason": "r"}, headers=headers)

    assert refused.status_code == 403
    assert (await ok(await http.get(url, headers=ADMIN)))["subject_id"] == subject_id


async def test_erasure_needs_a_reason_and_a_subject_of_the_own_tenant(
    http: httpx.AsyncClient,
) -> None:
    subject_id = await subject_with_canary(http)
    url = f"/v1/subjects/{subject_id}"

    assert (await http.request("DELETE", url, headers=ADMIN)).status_code == 422
    assert (await http.request("DELETE", url, json={}, headers=ADMIN)).status_code == 422
    foreign = await http.request("DELETE", url, json={"reason": "r"}, headers=FOREIGN_ADMIN)
    assert foreign.status_code == 404
