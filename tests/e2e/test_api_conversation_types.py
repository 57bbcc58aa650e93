"""Over HTTP: sessions name their conversation type, and the product reads each with its own
guidance. Two sessions of one lead, a sales discovery call and a support ticket, each saying
things the other's guidance has slots for: each proposes only from its own guidance's slots.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from support.api_harness import bearer, build_ports, line, token

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.proposals import kind_feeds
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import load_settings
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock

LEAD = "crm-lead-512"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="web-chat-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-4"))
# The lead's profile schema as a deployment would set it (FACTLEDGER_PROFILE_SCHEMAS): the
# sales guidance's slots and the support guidance's slots each feed fields of their own.
SCHEMA = {
    "lead": {
        "timeline": {"type": "text", "slots": ["timeline"]},
        "decision_maker": {"type": "text", "slots": ["decision_maker"]},
        "competitors": {"type": "list", "slots": ["competitor"]},
        "open_issue": {"type": "text", "slots": ["issue"]},
        "environment": {"type": "list", "slots": ["environment"]},
        "requested_outcome": {"type": "text", "slots": ["requested_outcome"]},
    }
}
# Both sessions say the same things; only the conversation type differs.
SAID = (
    "The final decision is with our CFO. We are also evaluating Northdesk. "
    "The export keeps failing on Windows 11. Please escalate this to your engineers."
)


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 5, 4, 10, 0, tzinfo=UTC)))


def worker(ports: Runtime) -> SyncWorker:
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    feeds = kind_feeds(load_settings(profile_schemas=SCHEMA))
    model = SessionProposer(
        ports.ledger, RuleExtractor(), Actor(ActorKind.MODEL, "rule@1"), feeds=feeds
    )
    return SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def session(
    http: httpx.AsyncClient, ports: Runtime, session_id: str, conversation_type: str
) -> set[str]:
    """One session of the given type; returns the fields proposed from it."""
    start = {"session_id": session_id, "channel": "chat", "conversation_type": conversation_type}
    started = await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    assert started["conversation_type"] == conversation_type
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    await ok(await http.post(**line(url, {"role": "subject", "text": SAID}, AGENT)))
    await ok(await http.post(f"/v1/subjects/me/sessions/{session_id}/end", json={}, headers=AGENT))
    report = await worker(ports).run_once()
    assert report.dead == 0
    ports.catch_up()
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    return {
        item["field"]
        for item in queue["items"]
        if (item.get("evidence") or {}).get("session_id") == session_id
    }


async def test_each_session_proposes_from_its_own_guidance_only(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    body = {"kind": "lead", "external_ref": LEAD}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)

    sales = await session(http, ports, "call-0504", "sales_discovery")
    assert sales == {"decision_maker", "competitors"}

    support = await session(http, ports, "ticket-0504", "support_ticket")
    assert support == {"open_issue", "environment", "requested_outcome"}


async def test_a_conversation_type_the_tenant_does_not_know_is_refused(
    http: httpx.AsyncClient,
) -> None:
    body = {"kind": "lead", "external_ref": LEAD}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    start = {"session_id": "s-1", "channel": "chat", "conversation_type": "onboarding"}
    refused = await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)
    assert refused.status_code == 422
    assert refused.json()["field"] == "conversation_type"
    start["conversation_type"] = "Not A Slug"
    refused = await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)
    assert refused.status_code == 422
    assert refused.json()["field"] == "conversation_type"
    del start["conversation_type"]
    untyped = await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    assert untyped["conversation_type"] is None
