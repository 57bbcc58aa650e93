"""Over HTTP, with the shipped sentence judgement: a lead asks in conversation to forget their
budget; the request waits in the review queue as a `forget` change of `budget`, quoting the
request; the request sentence is no memory; a reviewer's approval forgets the field and the
words that stated it, a rejection keeps it and records why; a rerun proposes nothing twice;
with the product's own wiring, a request said in German is placed on the field it speaks of
(ADR 0200), and one said in Italian passes the instruction screen to reach the queue (ADR
0201)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from structlog.testing import capture_logs
from support.api_harness import bearer, build_ports, line, token

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.judgement import forget_reader
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.bootstrap.proposals import build_proposer
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import load_settings
from factledger.application.memory.record_ids import namespace_for
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.manual_clock import ManualClock

LEAD = "crm-lead-512"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="web-chat-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-3"))
STATED = "Our budget is 40k a year."
ASKS = "Please delete our budget from your records."
GERMAN = "Bitte löschen Sie, bei wem wir die Verpackung kaufen."
SUPPLIER = "We buy our packaging from Boxmart."
# Read at 0.71 by the English instruction head alone: withheld as an instruction to the system.
ITALIAN = "Per favore cancellate dai vostri archivi il nostro budget, grazie."


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 2, 9, 14, 0, tzinfo=UTC))


@pytest.fixture
def ports(clock: ManualClock) -> Runtime:
    return build_ports(clock)


def sync_worker(ports: Runtime, model: SessionProposer, judge: LearnedJudge) -> SyncWorker:
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    return SyncWorker(
        SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model, judge=judge)
    )


def worker(ports: Runtime, *, forget_said_lines: bool = False) -> SyncWorker:
    judge = LearnedJudge.packaged()
    model = SessionProposer(
        ports.ledger,
        RuleExtractor(),
        Actor(ActorKind.MODEL, "rule@1"),
        judge=judge,
        forget_said_lines=forget_said_lines,
    )
    return sync_worker(ports, model, judge)


def product_worker(ports: Runtime) -> SyncWorker:
    """The worker as the product wires it from its default settings (ADR 0200: requests to
    forget placed by both encoders' reading)."""
    judge = LearnedJudge.packaged()
    model = build_proposer(load_settings(), ports.ledger, RuleExtractor(), judge=judge)
    return sync_worker(ports, model, judge)


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def conversation(
    http: httpx.AsyncClient,
    ports: Runtime,
    session_id: str,
    *lines: tuple[str, str],
    forget_said_lines: bool = False,
    wired: bool = False,
) -> None:
    """The session posted over HTTP, then synced by the hand-built worker or, `wired`, by the
    one the product wires from its settings."""
    start = {"session_id": session_id, "channel": "chat"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    for role, text in lines:
        url = f"/v1/subjects/me/sessions/{session_id}/messages"
        await ok(await http.post(**line(url, {"role": role, "text": text}, AGENT)))
    await ok(await http.post(f"/v1/subjects/me/sessions/{session_id}/end", json={}, headers=AGENT))
    sync = product_worker(ports) if wired else worker(ports, forget_said_lines=forget_said_lines)
    report = await sync.run_once()
    assert report.dead == 0
    ports.catch_up()


async def pending(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    items: list[dict[str, Any]] = queue["items"]
    return items


async def asked_to_forget(http: httpx.AsyncClient, ports: Runtime) -> tuple[str, dict[str, Any]]:
    body = {"kind": "lead", "external_ref": LEAD}
    lead = (await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201))[
        "subject_id"
    ]
    await conversation(
        http, ports, "web-0209", ("agent", "What can you spend?"), ("subject", STATED)
    )
    (budget,) = [i for i in await pending(http) if i["field"] == "budget"]
    url = f"/v1/subjects/{lead}/proposals/{budget['change_id']}/approve"
    await ok(await http.post(url, json={}, headers=REVIEWER))
    await conversation(
        http,
        ports,
        "web-0310",
        ("agent", "How is the evaluation going?"),
        ("subject", f"We are still comparing vendors. {ASKS}"),
    )
    (request,) = [i for i in await pending(http) if i["operation"] == "forget"]
    return lead, request


async def test_a_request_said_in_conversation_waits_in_the_queue_on_its_field(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, request = await asked_to_forget(http, ports)
    assert request["field"] == "budget"
    assert request["origin"] == "stated"
    assert request["value"] is None
    assert request["evidence"]["quote"] == ASKS
    assert request["evidence"]["session_id"] == "web-0310"
    # The field is untouched until someone decides.
    profile = await ok(await http.get(f"/v1/subjects/{lead}/profile", headers=REVIEWER))
    assert "budget" in profile["fields"]
    # The request sentence is no memory and no note: the backend never got it.
    assert ports.backend is not None
    memories = await ports.backend.list_memories(namespace_for(UUID(lead)))
    assert not any("delete" in m.text.lower() for m in memories)
    hits = await ok(
        await http.post(
            f"/v1/subjects/{lead}/recall",
            json={"query": "delete our budget from your records"},
            headers=SERVICE,
        )
    )
    assert ASKS not in str(hits)


async def test_approving_the_request_forgets_the_field_and_its_words(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, request = await asked_to_forget(http, ports)
    url = f"/v1/subjects/{lead}/proposals/{request['change_id']}/approve"
    decided = await ok(await http.post(url, json={}, headers=REVIEWER))
    assert decided["status"] == "confirmed"
    ports.catch_up()
    profile = await ok(await http.get(f"/v1/subjects/{lead}/profile", headers=REVIEWER))
    assert "budget" not in profile["fields"]
    assert await pending(http) == []
    events = await ok(await http.get(f"/v1/subjects/{lead}/events?limit=500", headers=REVIEWER))
    assert "40k" not in str(events)
    assert ASKS not in str(events)
    assert "We are still comparing vendors." not in str(events)  # the line went whole
    assert "How is the evaluation going?" in str(events)  # the agent's line stays
    # A rerun of the session's review proposes nothing again.
    assert ports.sync_store is not None
    await worker(ports).run_once()
    ports.catch_up()
    assert await pending(http) == []


async def test_rejecting_the_request_keeps_the_field_and_says_why(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, request = await asked_to_forget(http, ports)
    url = f"/v1/subjects/{lead}/proposals/{request['change_id']}/reject"
    reason = {"reason": "the lead withdrew the request on a call"}
    decided = await ok(await http.post(url, json=reason, headers=REVIEWER))
    assert decided["status"] == "rejected"
    ports.catch_up()
    profile = await ok(await http.get(f"/v1/subjects/{lead}/profile", headers=REVIEWER))
    assert profile["fields"]["budget"]["display"] == "40k a year"
    read = await ok(
        await http.get(f"/v1/subjects/{lead}/proposals/{request['change_id']}", headers=REVIEWER)
    )
    assert read["status"] == "rejected"
    assert await pending(http) == []


async def test_a_reader_of_requests_that_cannot_be_used_still_leaves_the_request_on_its_field(
    http: httpx.AsyncClient,
    ports: Runtime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ADR 0166's reader file damaged: the sync neither stalls nor drops the request; the flag
    # alone notices it, and the log says why by error type only.
    damaged = tmp_path / "forget-reader-int8.onnx"
    damaged.write_bytes(forget_reader.PACKAGED_FORGET_READER.read_bytes()[:4096])
    monkeypatch.setattr(forget_reader, "PACKAGED_FORGET_READER", damaged)

    with capture_logs() as logs:
        _, request = await asked_to_forget(http, ports)

    assert (request["field"], request["evidence"]["quote"]) == ("budget", ASKS)
    assert {e.get("error_type") for e in logs if e["event"] == "forget_reader_unavailable"} == {
        "ForgetReaderIntegrityError"
    }
    assert not any(ASKS in str(e) for e in logs)


async def test_a_request_in_another_language_is_placed_on_the_field_it_speaks_of(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    """ADR 0200: the German request speaks of the supplier without naming it; read by the
    heads' English encoder alone it was close to no field and placed on none."""
    body = {"kind": "lead", "external_ref": LEAD}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    sessions = (
        ("web-0209", "What can you spend, and who supplies you?", f"{STATED} {SUPPLIER}"),
        ("web-0310", "Anything else for today?", GERMAN),
    )
    for session_id, asked, said in sessions:
        await conversation(http, ports, session_id, ("agent", asked), ("subject", said), wired=True)
    held = {i["field"] for i in await pending(http) if i["operation"] != "forget"}
    assert {"budget", "supplier"} <= held
    (request,) = [i for i in await pending(http) if i["operation"] == "forget"]
    assert request["field"] == "supplier"
    assert request["evidence"]["quote"] == GERMAN
    assert request["rationale"].endswith("meaning")


async def test_a_request_in_another_language_passes_the_instruction_screen_to_the_queue(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    """ADR 0201: read by the English instruction head alone, the Italian request was withheld
    as an instruction to the system, never recorded, so never noticed."""
    body = {"kind": "lead", "external_ref": LEAD}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    await conversation(
        http, ports, "web-0209", ("agent", "What can you spend?"), ("subject", STATED)
    )
    start = {"session_id": "web-0310", "channel": "chat"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    url = "/v1/subjects/me/sessions/web-0310/messages"
    said = await ok(await http.post(**line(url, {"role": "subject", "text": ITALIAN}, AGENT)))
    assert said["kept"] is True
    await ok(await http.post("/v1/subjects/me/sessions/web-0310/end", json={}, headers=AGENT))
    assert (await product_worker(ports).run_once()).dead == 0
    ports.catch_up()

    (request,) = [i for i in await pending(http) if i["operation"] == "forget"]
    assert (request["field"], request["evidence"]["quote"]) == ("budget", ITALIAN)
