"""Over HTTP, with the product proposing by itself: a value said again in another format is no
new proposal, and a correction's proposal names the value it corrects."""

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

LEAD = "crm-lead-12"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER))


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 2, 9, 14, 0, tzinfo=UTC)))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def conversation(http: httpx.AsyncClient, ports: Runtime, session_id: str, text: str) -> None:
    start = {"session_id": session_id, "channel": "chat"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    await ok(await http.post(**line(url, {"role": "subject", "text": text}, AGENT)))
    await ok(await http.post(f"/v1/subjects/me/sessions/{session_id}/end", json={}, headers=AGENT))
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    model = SessionProposer(ports.ledger, RuleExtractor(), Actor(ActorKind.MODEL, "rule@1"))
    ports_ = SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model)
    assert (await SyncWorker(ports_).run_once()).dead == 0
    ports.catch_up()


async def pending(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    items: list[dict[str, Any]] = queue["items"]
    return items


async def test_an_amount_said_again_in_another_format_is_no_proposal(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    register = {"kind": "lead", "external_ref": LEAD}
    subject = await ok(await http.post("/v1/subjects", json=register, headers=SERVICE), 201)
    await conversation(http, ports, "c1", "Our budget is $12,000.")
    (budget,) = await pending(http)
    url = f"/v1/subjects/{subject['subject_id']}/proposals/{budget['change_id']}/approve"
    await ok(await http.post(url, json={}, headers=REVIEWER))

    await conversation(http, ports, "c2", "Our budget is 12,000 USD.")
    await conversation(http, ports, "c3", "The budget is 12000 dollars.")

    assert await pending(http) == []


async def test_a_correction_names_the_value_it_corrects(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    register = {"kind": "lead", "external_ref": LEAD}
    await ok(await http.post("/v1/subjects", json=register, headers=SERVICE), 201)

    await conversation(
        http, ports, "c1", "We no longer work with Initech, we work with Globex now."
    )

    (supplier,) = await pending(http)
    assert supplier["value"] == {"type": "text", "value": "Globex"}
    assert supplier["rationale"].startswith("correction of supplier")
    assert supplier["rationale"].endswith("replaces Initech")
