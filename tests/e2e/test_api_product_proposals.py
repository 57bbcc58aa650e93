"""Over HTTP, with no caller proposals: three sessions of a lead in everyday wording, and the
product proposes by itself (origin, condition, relation); a reviewer approves one change and
rejects an inference; the profile's versions and histories come out right."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from support.api_harness import bearer, build_ports, line, token

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock

LEAD = "crm-lead-311"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="web-chat-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-3"))
MODEL = {"kind": "model", "id": "rule@1"}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 2, 9, 14, 0, tzinfo=UTC))


@pytest.fixture
def ports(clock: ManualClock) -> Runtime:
    return build_ports(clock)


def worker(ports: Runtime) -> SyncWorker:
    """The sync worker as `bootstrap` runs it after each recording: with the product's model."""
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    model = SessionProposer(ports.ledger, RuleExtractor(), Actor(ActorKind.MODEL, "rule@1"))
    return SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def conversation(
    http: httpx.AsyncClient, ports: Runtime, session_id: str, *lines: tuple[str, str]
) -> None:
    """One session over HTTP, ended with no proposals; then the post-recording step runs."""
    start = {"session_id": session_id, "channel": "chat"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    for role, text in lines:
        url = f"/v1/subjects/me/sessions/{session_id}/messages"
        await ok(await http.post(**line(url, {"role": role, "text": text}, AGENT)))
    url = f"/v1/subjects/me/sessions/{session_id}/end"
    ended = await ok(await http.post(url, json={}, headers=AGENT))
    assert ended["proposals"] == []  # nothing is proposed inside the request
    report = await worker(ports).run_once()
    assert report.dead == 0
    ports.catch_up()


async def pending(http: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    by_field = {item["field"]: item for item in queue["items"]}
    assert len(by_field) == len(queue["items"])  # one pending change per field
    return by_field


async def test_the_product_proposes_from_three_sessions_and_a_reviewer_decides(
    http: httpx.AsyncClient, ports: Runtime, clock: ManualClock
) -> None:
    body = {"kind": "lead", "external_ref": LEAD}
    lead_id = (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))[
        "subject_id"
    ]

    # February: the current vendor and a budget, stated plainly.
    await conversation(
        http,
        ports,
        "web-0209",
        ("agent", "Who looks after your office cleaning today?"),
        ("subject", "Right now we order from Initech. Our budget is 40k a year."),
    )
    queue = await pending(http)
    assert set(queue) == {"supplier", "budget"}
    supplier = queue["supplier"]
    assert (supplier["display"], supplier["origin"], supplier["condition"]) == (
        "Initech",
        "stated",
        None,
    )
    assert supplier["proposed_by"] == MODEL
    assert supplier["evidence"] == {
        "session_id": "web-0209",
        "message_index": 1,
        "quote": "Right now we order from Initech.",
    }
    approve = f"/v1/subjects/{lead_id}/proposals/{supplier['change_id']}/approve"
    approved = await ok(await http.post(approve, json={}, headers=REVIEWER))
    assert approved["profile_version"] == 1

    # April: a switch (an update of the approved value), a complaint that lets the model
    # infer something, and a plan that hangs on a condition.
    clock.set(datetime(2026, 4, 14, 9, 30, tzinfo=UTC))
    await conversation(
        http,
        ports,
        "web-0414",
        ("agent", "Anything new on your side since February?"),
        ("subject", "We have switched to Globex. The shipments from Initech kept arriving late."),
        ("subject", "We might open a second site in Lyon, depending on the board vote."),
    )
    queue = await pending(http)
    assert queue["supplier"]["display"] == "Globex"
    assert queue["supplier"]["rationale"].startswith("update of supplier")
    assert queue["supplier"]["based_on_version"] == 1
    intent = queue["purchase_intent"]
    assert intent["condition"] == "depending on the board vote"
    assert intent["origin"] == "stated"
    assert intent["evidence"]["quote"] == (
        "We might open a second site in Lyon, depending on the board vote."
    )
    insight = queue["insights"]
    assert (insight["origin"], insight["operation"]) == ("inferred", "append")
    assert insight["rationale"].startswith("derivation of insights")

    # The reviewer rejects the inference.
    reject = f"/v1/subjects/{lead_id}/proposals/{insight['change_id']}/reject"
    reason = {"reason": "an inference, nobody said it"}
    assert (await ok(await http.post(reject, json=reason, headers=REVIEWER)))["status"] == (
        "rejected"
    )

    # June: a newer budget supersedes the open one; nothing repeats the approved supplier.
    clock.set(datetime(2026, 6, 2, 16, 0, tzinfo=UTC))
    earlier_budget = queue["budget"]["change_id"]
    await conversation(
        http,
        ports,
        "web-0602",
        ("subject", "Our budget was cut to 30k. The shipments from Initech kept arriving late."),
    )
    queue = await pending(http)
    assert queue["budget"]["display"] == "30k"
    assert queue["budget"]["supersedes"] == [earlier_budget]
    assert "insights" not in queue  # the rejected inference is not proposed again
    old = await ok(
        await http.get(f"/v1/subjects/{lead_id}/proposals/{earlier_budget}", headers=REVIEWER)
    )
    assert old["status"] == "superseded"
    assert old["superseded_by"] == queue["budget"]["change_id"]

    approve = f"/v1/subjects/{lead_id}/proposals/{queue['supplier']['change_id']}/approve"
    assert (await ok(await http.post(approve, json={}, headers=REVIEWER)))["profile_version"] == 2
    ports.catch_up()

    profile = await ok(await http.get(f"/v1/subjects/{lead_id}/profile", headers=REVIEWER))
    assert profile["version"] == 2
    assert {name: f["display"] for name, f in profile["fields"].items()} == {"supplier": "Globex"}
    assert profile["fields"]["supplier"]["proposed_by"] == MODEL
    first = await ok(await http.get(f"/v1/subjects/{lead_id}/profile/versions/1", headers=REVIEWER))
    assert first["fields"]["supplier"]["display"] == "Initech"
    history = await ok(await http.get(f"/v1/subjects/{lead_id}/profile/history", headers=REVIEWER))
    entries = [
        (h["field"], h["display"], h["version"], h["until_version"]) for h in history["entries"]
    ]
    assert entries == [("supplier", "Initech", 1, 2), ("supplier", "Globex", 2, None)]
