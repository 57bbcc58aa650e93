"""Over HTTP, with the shipped sentence judgement (ADRs 0174, 0175): a lead asks in conversation to
forget something no profile field holds ("what I told you about my ex"); the request waits in
the review queue as a `forget_said` change naming the line it concerns; while it waits,
recall withholds that line's memories; a reviewer's approval forgets the line, the request's
own line and the memories drawn from them, and the event stream shows who decided."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import build_ports

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.memory.record_ids import namespace_for, transcript_document_id
from factledger.domain.events import FactForgotten
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.testing.manual_clock import ManualClock

from .test_api_forget_requests_said import (
    LEAD,
    REVIEWER,
    SERVICE,
    conversation,
    ok,
    pending,
    worker,
)


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 2, 9, 14, 0, tzinfo=UTC)))


SAID = "My ex and I split up last spring, it was a hard year."
ASKS = "Please forget what I told you about my ex."


async def _conversation(
    http: httpx.AsyncClient, ports: Runtime, session_id: str, *lines: tuple[str, str]
) -> None:
    await conversation(http, ports, session_id, *lines, forget_said_lines=True)


async def _asked(http: httpx.AsyncClient, ports: Runtime) -> tuple[str, dict[str, Any]]:
    body = {"kind": "lead", "external_ref": LEAD}
    made = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    await _conversation(http, ports, "web-0209", ("agent", "How have you been?"), ("subject", SAID))
    await _conversation(
        http,
        ports,
        "web-0310",
        ("agent", "Anything else before we start?"),
        ("subject", f"Thanks for waiting. {ASKS}"),
    )
    (request,) = [i for i in await pending(http) if i["operation"] == "forget_said"]
    return made["subject_id"], request


async def _memories_of_the_line(ports: Runtime, lead: str) -> list[str]:
    assert ports.backend is not None
    document = transcript_document_id(UUID(lead), "web-0209")
    memories = await ports.backend.list_memories(namespace_for(UUID(lead)))
    return [m.id for m in memories if m.document_id == document]


async def test_the_request_names_the_line_and_recall_withholds_it_while_it_waits(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, request = await _asked(http, ports)
    assert request["field"] == SAID_LINES
    assert request["origin"] == "stated"
    assert request["value"] == {"type": "list", "items": [line_ref("web-0209", 1)]}
    assert request["evidence"]["quote"] == ASKS
    assert await _memories_of_the_line(ports, lead), "the backend drew a memory from the line"
    notes = await ok(
        await http.post(
            f"/v1/subjects/{lead}/recall",
            json={"query": "who did they split up with"},
            headers=SERVICE,
        )
    )
    assert "split up" not in str(notes)
    assert ASKS not in str(notes)


async def test_approving_it_forgets_the_line_its_memories_and_the_request(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, request = await _asked(http, ports)
    url = f"/v1/subjects/{lead}/proposals/{request['change_id']}/approve"
    decided = await ok(await http.post(url, json={}, headers=REVIEWER))
    assert decided["status"] == "confirmed"
    ports.catch_up()
    assert await pending(http) == []
    events = await ok(await http.get(f"/v1/subjects/{lead}/events?limit=500", headers=REVIEWER))
    assert SAID not in str(events)
    assert ASKS not in str(events)
    assert "Anything else before we start?" in str(events)  # the agent's line stays
    forgot = [e for e in events["events"] if e["topic"] == FactForgotten.TOPIC]
    assert [e["payload"]["request_id"] for e in forgot] == [request["change_id"]]

    await worker(ports, forget_said_lines=True).run_once()  # the sync forgets the line's memories
    assert await _memories_of_the_line(ports, lead) == []
    read = await ok(
        await http.get(f"/v1/subjects/{lead}/proposals/{request['change_id']}", headers=REVIEWER)
    )
    assert read["status"] == "confirmed"
    assert read["redacted"] is True  # the request's words went with the lines


async def test_rejecting_it_keeps_the_line(http: httpx.AsyncClient, ports: Runtime) -> None:
    lead, request = await _asked(http, ports)
    url = f"/v1/subjects/{lead}/proposals/{request['change_id']}/reject"
    await ok(await http.post(url, json={"reason": "asked about another matter"}, headers=REVIEWER))
    ports.catch_up()
    events = await ok(await http.get(f"/v1/subjects/{lead}/events?limit=500", headers=REVIEWER))
    assert SAID in str(events)


async def test_an_agent_proposing_a_line_said_after_the_request_gets_a_422_naming_the_value(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, _ = await _asked(http, ports)
    body = {
        "field": SAID_LINES,
        "operation": "forget_said",
        "value": {"type": "list", "items": [line_ref("web-0310", 1)]},
        "origin": "stated",
        "evidence": {"session_id": "web-0310", "message_index": 1, "quote": ASKS},
    }
    refused = await http.post(f"/v1/subjects/{lead}/proposals", json=body, headers=SERVICE)
    assert refused.status_code == 422, refused.text
    assert "value" in refused.text


async def test_forgetting_the_reserved_field_directly_is_a_422_naming_it(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, _ = await _asked(http, ports)
    body = {"field": SAID_LINES, "reason": "the subject asked"}
    refused = await http.post(f"/v1/subjects/{lead}/forget", json=body, headers=SERVICE)
    assert refused.status_code == 422, refused.text
    assert f"field: {SAID_LINES} is reserved" in refused.text
