"""Over HTTP, the conversation plan asks only sensible questions and one statement gets one
proposal:

- a supplier the lead said three months later they had left is not put to them again, and an
  inferred churn risk is never put to them at all: both stay pending for reviewers;
- when the product's review finds the very change a caller proposed from the same session, it
  keeps the caller's change and says it agrees, instead of proposing it a second time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, token
from support.key_stores import pinned_subject_id

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind

LEAD = "crm-4471"
LEAD_ID = str(pinned_subject_id("t1", "lead", LEAD))
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="chat-bot"))
CHANNEL = bearer(token(Role.SERVICE, principal_id="chat-platform"))
REVIEWER = bearer(token(Role.REVIEWER))
SUBJECT = f"/v1/subjects/{LEAD_ID}"
MODEL = Actor(ActorKind.MODEL, "rule@1")


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await client.post("/v1/subjects", json=body, headers=CHANNEL)).is_success
        yield client


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def chat(
    http: httpx.AsyncClient, session_id: str, started_at: str, said: str, *proposals: Any
) -> list[dict[str, Any]]:
    """One chat: the channel relays the subject's line; the agent ends it with its proposals."""
    start = {"session_id": session_id, "channel": "chat", "started_at": started_at}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    url = f"{SUBJECT}/sessions/{session_id}/messages"
    await ok(await http.post(url, json={"role": "subject", "text": said}, headers=CHANNEL))
    end = f"/v1/subjects/me/sessions/{session_id}/end"
    ended = await ok(await http.post(end, json={"proposals": list(proposals)}, headers=AGENT))
    changes: list[dict[str, Any]] = ended["proposals"]
    return changes


def proposal(session_id: str, field: str, value: str, quote: str, origin: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": origin,
        "evidence": {"session_id": session_id, "message_index": 0, "quote": quote},
    }


async def test_the_plan_skips_superseded_values_and_inferences(http: httpx.AsyncClient) -> None:
    january = await chat(
        http,
        "chat-jan",
        "2025-10-06T09:00:00Z",
        "We buy from Supplier A and I am not happy.",
        proposal("chat-jan", "supplier", "Supplier A", "We buy from Supplier A", "stated"),
        proposal("chat-jan", "churn_risk", "high", "I am not happy", "inferred"),
    )
    april = await chat(
        http,
        "chat-apr",
        "2026-01-02T09:00:00Z",
        "We left Supplier A, we buy from Supplier C now.",
        proposal("chat-apr", "supplier", "Supplier C", "we buy from Supplier C now", "stated"),
    )
    old_supplier, churn_risk = (c["change_id"] for c in january)
    (new_supplier,) = (c["change_id"] for c in april)

    context = await ok(await http.post("/v1/subjects/me/context", json={}, headers=AGENT))
    asked = {n["ref"]: n["question"] for n in context["to_confirm"]}
    assert asked == {new_supplier: "Is it right that your supplier is Supplier C?"}

    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    assert {i["change_id"] for i in queue["items"]} >= {old_supplier, churn_risk}


def product_review(ports: Runtime) -> SyncWorker:
    """The sync worker as `bootstrap` runs it after each recording: with the product's model."""
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    model = SessionProposer(ports.ledger, RuleExtractor(), MODEL)
    return SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model))


async def test_the_review_keeps_the_callers_change_and_agrees(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    said = "Right now we order from Initech."
    (caller,) = await chat(
        http,
        "chat-1",
        "2026-01-05T08:00:00Z",
        said,
        proposal("chat-1", "supplier", "initech", said, "stated"),
    )
    report = await product_review(ports).run_once()
    assert report.dead == 0
    ports.catch_up()

    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    suppliers = [i for i in queue["items"] if i["field"] == "supplier"]
    assert [i["change_id"] for i in suppliers] == [caller["change_id"]]
    change = await ok(await http.get(f"{SUBJECT}/proposals/{caller['change_id']}", headers=CHANNEL))
    assert change["status"] == "pending"
    assert change["proposed_by"]["kind"] == "agent"
    assert change["agreed_by"] == [{"kind": "model", "id": "rule@1"}]
