"""The read side over HTTP: profile, versions, as-of, history, diff, review queue, the analysts'
event feed, context and recall (failing open), and the metrics they feed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, line, token

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.recall.policy import RecallPolicies
from factledger.testing.manual_clock import ManualClock
from factledger.testing.stalling_backend import StallingBackend

JAN = datetime(2026, 1, 14, 10, tzinfo=UTC)
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
ANALYST = bearer(token(Role.ANALYST))
FOREIGN_ANALYST = bearer(token(Role.ANALYST, tenant="t2"))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(JAN)


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


async def supplier_story(http: httpx.AsyncClient, clock: ManualClock) -> str:
    """Supplier A approved in January, Supplier B in March; returns the subject id."""
    body = {"kind": "lead", "external_ref": "crm-1"}
    subject_id = str(
        (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))["subject_id"]
    )
    for month, supplier in ((1, "Supplier A"), (3, "Supplier B")):
        clock.set(datetime(2026, month, 14, 10, tzinfo=UTC))
        sid = f"wa-{month}"
        start = {"session_id": sid, "channel": "whatsapp"}
        await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
        msg = {"role": "subject", "text": f"We work with {supplier} now."}
        await ok(await http.post(**line(f"/v1/subjects/me/sessions/{sid}/messages", msg, AGENT)))
        proposal = {
            "field": "supplier",
            "value": {"type": "text", "value": supplier},
            "origin": "stated",
            "evidence": {"session_id": sid, "message_index": 0, "quote": supplier},
            "based_on_version": month // 3,
        }
        end = {"proposals": [proposal]}
        ended = await ok(
            await http.post(f"/v1/subjects/me/sessions/{sid}/end", json=end, headers=AGENT)
        )
        change = ended["proposals"][0]["change_id"]
        url = f"/v1/subjects/{subject_id}/proposals/{change}/approve"
        await ok(await http.post(url, json={}, headers=REVIEWER))
    return subject_id


async def test_profile_versions_history_and_diff(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    subject_id = await supplier_story(http, clock)
    current = await ok(await http.get("/v1/subjects/me/profile", headers=AGENT))
    assert current["version"] == 2
    assert current["fields"]["supplier"]["value"] == {"type": "text", "value": "Supplier B"}
    first = await ok(await http.get("/v1/subjects/me/profile/versions/1", headers=AGENT))
    assert first["fields"]["supplier"]["display"] == "Supplier A"
    february = datetime(2026, 2, 1, tzinfo=UTC).isoformat()
    as_of = await ok(
        await http.get("/v1/subjects/me/profile", params={"as_of": february}, headers=AGENT)
    )
    assert as_of["version"] == 1
    naive = await http.get(
        "/v1/subjects/me/profile", params={"as_of": "2026-02-01T00:00:00"}, headers=AGENT
    )
    assert naive.status_code == 422
    assert naive.json()["field"] == "as_of"
    history = await ok(
        await http.get(
            f"/v1/subjects/{subject_id}/profile/history",
            params={"field": "supplier"},
            headers=REVIEWER,
        )
    )
    displays = [e["display"] for e in history["entries"]]
    assert displays == ["Supplier A", "Supplier B"]
    diff = await ok(
        await http.get(
            "/v1/subjects/me/profile/diff",
            params={"from_version": 1, "to_version": 2},
            headers=AGENT,
        )
    )
    assert [(c["before"]["display"], c["after"]["display"]) for c in diff["changes"]] == [
        ("Supplier A", "Supplier B")
    ]
    missing = await http.get("/v1/subjects/me/profile/versions/9", headers=AGENT)
    assert missing.status_code == 404


async def test_the_review_queue_lists_pending_proposals_of_the_tenant(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    await supplier_story(http, clock)
    inferred = {
        "field": "budget_holder",
        "value": {"type": "boolean", "value": True},
        "origin": "inferred",
    }
    change = await ok(
        await http.post("/v1/subjects/me/proposals", json=inferred, headers=AGENT), 201
    )
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    assert [item["change_id"] for item in queue["items"]] == [change["change_id"]]
    foreign = await ok(
        await http.get("/v1/proposals/pending", headers=bearer(token(Role.REVIEWER, tenant="t2")))
    )
    assert foreign["items"] == []
    assert (await http.get("/v1/proposals/pending", headers=AGENT)).status_code == 403


async def test_analysts_page_through_events_in_order(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    subject_id = await supplier_story(http, clock)
    url = f"/v1/subjects/{subject_id}/events"
    seen: list[int] = []
    after = 0
    while True:
        page = await ok(await http.get(url, params={"after": after, "limit": 2}, headers=ANALYST))
        seen += [e["version"] for e in page["events"]]
        if page["next_after"] is None:
            break
        after = page["next_after"]
    assert seen == list(range(1, len(seen) + 1))
    assert len(seen) == 7  # registered, then per month: session, proposal, confirmation
    first = await ok(await http.get(url, params={"limit": 1}, headers=ANALYST))
    assert first["events"][0]["topic"] == "factledger.subject.registered.v1"
    assert (await http.get(url, headers=AGENT)).status_code == 403
    assert (await http.get(url, headers=FOREIGN_ANALYST)).status_code == 404


async def test_forgotten_values_are_redacted_from_the_event_feed(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    subject_id = await supplier_story(http, clock)
    forget = {"field": "supplier", "reason": "the subject asked"}
    await ok(await http.post("/v1/subjects/me/forget", json=forget, headers=AGENT))
    feed = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ANALYST))
    proposals = [e for e in feed["events"] if e["topic"].endswith("change_proposed.v1")]
    assert len(proposals) == 2
    assert all(p["payload"]["value"] is None for p in proposals)
    assert "Supplier A" not in str([p["payload"] for p in proposals])
    profile = await ok(await http.get("/v1/subjects/me/profile", headers=AGENT))
    assert "supplier" not in profile["fields"]


async def test_context_and_recall_answer_with_notes_and_a_prompt(
    http: httpx.AsyncClient, clock: ManualClock
) -> None:
    await supplier_story(http, clock)
    context = await ok(await http.post("/v1/subjects/me/context", json={}, headers=AGENT))
    assert context["degraded"] is None
    assert any("Supplier B" in note["text"] for note in context["profile"])
    assert '"' not in " ".join(note["text"] for note in context["profile"])
    assert "Supplier B" in context["prompt"]
    recall = await ok(
        await http.post("/v1/subjects/me/recall", json={"query": "supplier"}, headers=AGENT)
    )
    assert set(recall) >= {"notes", "excerpts", "degraded", "prompt", "elapsed_ms"}


async def test_a_stalled_backend_degrades_recall_and_is_counted(clock: ManualClock) -> None:
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    stalled = StallingBackend(inner, stall_s=30.0)
    ports = build_ports(clock, memory=stalled, policies=RecallPolicies())  # the product's
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        body = {"kind": "lead", "external_ref": "crm-1"}
        await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
        answer = await ok(
            await http.post("/v1/subjects/me/recall", json={"query": "supplier"}, headers=AGENT)
        )
        assert answer["degraded"] == "timeout"
        metrics = (await http.get("/metrics")).text
    assert 'factledger_recall_degraded_total{operation="recall",reason="timeout"} 1.0' in metrics
    assert "factledger_sync_lag_events" in metrics
    assert 'factledger_projection_lag_events{projection="profile"}' in metrics


async def test_an_approval_note_is_answered_and_shown_in_the_history(
    http: httpx.AsyncClient,
) -> None:
    body = {"kind": "lead", "external_ref": "crm-1"}
    created = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    subject_id = created["subject_id"]
    proposal = {
        "field": "budget",
        "value": {"type": "text", "value": "about 3k"},
        "origin": "inferred",
    }
    proposed = await ok(
        await http.post(f"/v1/subjects/{subject_id}/proposals", json=proposal, headers=SERVICE),
        201,
    )
    url = f"/v1/subjects/{subject_id}/proposals/{proposed['change_id']}/approve"
    decided = await ok(await http.post(url, json={"note": "matches the quote"}, headers=REVIEWER))
    assert decided["note"] == "matches the quote"
    history = await ok(
        await http.get(
            f"/v1/subjects/{subject_id}/profile/history",
            params={"field": "budget"},
            headers=REVIEWER,
        )
    )
    assert [e["note"] for e in history["entries"]] == ["matches the quote"]
    forget = {"field": "budget", "reason": "asked"}
    await ok(await http.post(f"/v1/subjects/{subject_id}/forget", json=forget, headers=SERVICE))
    history = await ok(
        await http.get(
            f"/v1/subjects/{subject_id}/profile/history",
            params={"field": "budget"},
            headers=REVIEWER,
        )
    )
    assert "matches the quote" not in str(history)
