"""What the idempotency store keeps of a keyed request, over HTTP on the SQLite store: the
fingerprint is an HMAC under the deployment's fingerprint key, bound to the entry's scope, so a
short body ("Yes.") cannot be recovered from it by guessing; retries still replay, another body
under the key is still a 422. A request to forget approved by a reviewer, or by the subject's
own words at a session's end, drops the subject's saved responses, which quoted the words."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from fastapi import FastAPI
from support.api_harness import TEST_AUTH, asgi_client, bearer, line, token

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.request_fingerprints import (
    FINGERPRINT_SCOPE,
    keyed_fingerprint,
    request_digest,
)

LEAD = "crm-fingerprints"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="wa-bot"))
SERVICE = bearer(token(Role.SERVICE, principal_id="channel"))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-4"))
STATED = "Our budget is 40k a year."
ASKS = "Please delete our budget from your records."
MESSAGES = "/v1/subjects/{sid}/sessions/{session}/messages"
ROUTE = "/v1/subjects/{subject}/sessions/{session_id}/messages"  # the route's template


@pytest.fixture
def store(tmp_path: Path) -> AsyncIterator[SqliteIdempotencyStore]:
    store = SqliteIdempotencyStore(tmp_path / "ledger-idempotency.sqlite")
    yield store
    store.close()


@pytest.fixture
def app(ports: Runtime, store: SqliteIdempotencyStore) -> FastAPI:
    return create_app(ports=replace(ports, idempotency=store), auth=TEST_AUTH)


@pytest.fixture
async def api(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(app) as client:
        yield client


def rows(tmp_path: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(tmp_path / "ledger-idempotency.sqlite") as db:
        return list(db.execute("SELECT key, fingerprint, body FROM idempotency_keys"))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def started(http: httpx.AsyncClient, session_id: str) -> str:
    body = {"kind": "lead", "external_ref": LEAD}
    sid = (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))["subject_id"]
    start = {"session_id": session_id, "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    return str(sid)


def say(http: httpx.AsyncClient, url: str, body: bytes, key: str) -> Any:
    headers = {**SERVICE, "Idempotency-Key": key, "Content-Type": "application/json"}
    return http.post(url, content=body, headers=headers)


async def test_the_stored_fingerprint_is_an_hmac_no_digest_of_the_body_gives(
    api: httpx.AsyncClient, ports: Runtime, tmp_path: Path
) -> None:
    sid = await started(api, "wa-1")
    url = MESSAGES.format(sid=sid, session="wa-1")
    body = b'{"role":"subject","text":"Yes."}'
    await ok(await say(api, url, body, "yes-line-0001"))

    ((_, stored, _),) = rows(tmp_path)
    digest = request_digest("POST", ROUTE, url, body)
    # What the store kept before keyed fingerprints: anyone could hash guesses to match it.
    assert stored != digest.hex()
    assert stored != hashlib.sha256(body).hexdigest()
    live = ports.ledger.keys.live(FINGERPRINT_SCOPE)
    assert live is not None
    scope = IdempotencyScope("t1", "channel", UUID(sid), "yes-line-0001")
    assert stored == keyed_fingerprint(live[1], scope, digest)


async def test_a_retry_still_replays_and_another_body_under_the_key_is_a_422(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    sid = await started(api, "wa-2")
    url = MESSAGES.format(sid=sid, session="wa-2")
    body = b'{"role":"subject","text":"Yes."}'
    first = await ok(await say(api, url, body, "yes-line-0002"))
    retry = await say(api, url, body, "yes-line-0002")
    assert retry.status_code == 200
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first
    other = await say(api, url, b'{"role":"subject","text":"No."}', "yes-line-0002")
    assert other.status_code == 422
    assert other.json()["error"] == "IdempotencyKeyReusedError"
    messages = await ok(await api.get("/v1/subjects/me/sessions/wa-2/messages", headers=AGENT))
    assert [m["text"] for m in messages["messages"]] == ["Yes."]


def stated_budget(session_id: str) -> dict[str, Any]:
    return {
        "field": "budget",
        "value": {"type": "text", "value": "40k a year"},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": 0, "quote": STATED},
    }


async def budget_confirmed_with_a_saved_quote(api: httpx.AsyncClient) -> tuple[str, int]:
    """The lead states a budget; the end, keyed, saves a response quoting the words. The
    subject's id and its profile version once the budget is approved."""
    sid = await started(api, "wa-3")
    url = MESSAGES.format(sid=sid, session="wa-3")
    await ok(await api.post(**line(url, {"role": "subject", "text": STATED}, AGENT)))
    end = {"proposals": [stated_budget("wa-3")]}
    headers = {**AGENT, "Idempotency-Key": "end-wa-3-0001"}
    ended = await ok(await api.post("/v1/subjects/me/sessions/wa-3/end", json=end, headers=headers))
    (change,) = ended["proposals"]
    approve = f"/v1/subjects/{sid}/proposals/{change['change_id']}/approve"
    approved = await ok(await api.post(approve, json={}, headers=REVIEWER))
    return sid, int(approved["profile_version"])


def quoted(tmp_path: Path) -> list[str]:
    return [key for key, _, body in rows(tmp_path) if body is not None and "40k" in body]


async def test_an_approved_request_to_forget_drops_the_saved_responses_quoting_the_words(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    sid, version = await budget_confirmed_with_a_saved_quote(api)
    assert quoted(tmp_path) == ["end-wa-3-0001"]
    start = {"session_id": "wa-4", "channel": "whatsapp"}
    await ok(await api.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    url = MESSAGES.format(sid=sid, session="wa-4")
    await ok(await api.post(**line(url, {"role": "subject", "text": ASKS}, AGENT)))
    request = {
        "field": "budget",
        "operation": "forget",
        "origin": "stated",
        "evidence": {"session_id": "wa-4", "message_index": 0, "quote": ASKS},
        "based_on_version": version,
    }
    ended = await ok(
        await api.post(
            "/v1/subjects/me/sessions/wa-4/end", json={"proposals": [request]}, headers=AGENT
        )
    )
    (asked,) = ended["proposals"]

    approve = f"/v1/subjects/{sid}/proposals/{asked['change_id']}/approve"
    await ok(await api.post(approve, json={}, headers=REVIEWER))

    assert quoted(tmp_path) == []


async def test_a_request_to_forget_the_subject_confirms_at_an_end_drops_them_too(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    sid, version = await budget_confirmed_with_a_saved_quote(api)
    request = {
        "field": "budget",
        "operation": "forget",
        "origin": "inferred",
        "rationale": "the lead mentioned privacy",
        "based_on_version": version,
    }
    asked = await ok(await api.post("/v1/subjects/me/proposals", json=request, headers=AGENT), 201)
    start = {"session_id": "wa-5", "channel": "whatsapp"}
    await ok(await api.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    url = MESSAGES.format(sid=sid, session="wa-5")
    question = {"role": "agent", "text": "Shall we forget your budget?", "asks": asked["change_id"]}
    await ok(await api.post(**line(url, question, AGENT)))
    await ok(await api.post(**line(url, {"role": "subject", "text": "Yes, please do."}, AGENT)))

    ended = await ok(await api.post("/v1/subjects/me/sessions/wa-5/end", json={}, headers=AGENT))

    assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [
        (asked["change_id"], "confirmed")
    ]
    assert quoted(tmp_path) == []
