"""Over HTTP, the confirmation step of the conversation plan: `context` lists what to ask,
with a suggested question and the change id; the agent asks it (`asks`), the subject's answer,
relayed by the channel with `confirms` or `declines`, decides the change when the session
ends, with that answer as evidence."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, relayed, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role

LEAD = "crm-640"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="chat-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).is_success
        yield client


async def start(http: httpx.AsyncClient, session_id: str) -> None:
    body = {"session_id": session_id, "channel": "chat"}
    assert (await http.post("/v1/subjects/me/sessions", json=body, headers=AGENT)).is_success


async def say(http: httpx.AsyncClient, session_id: str, **message: Any) -> httpx.Response:
    """The agent's lines with its token, the subject's relayed by the channel."""
    headers, auth = relayed(message, AGENT)
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    if auth is None:
        return await http.post(url, json=message, headers=headers)
    return await http.post(url, json=message, headers=headers, auth=auth)


async def end(http: httpx.AsyncClient, session_id: str, **body: Any) -> httpx.Response:
    url = f"/v1/subjects/me/sessions/{session_id}/end"
    return await http.post(url, json=body, headers=AGENT)


def stated(field: str, value: str, index: int, quote: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": "stated",
        "evidence": {"session_id": "chat-1", "message_index": index, "quote": quote},
    }


async def first_chat(http: httpx.AsyncClient) -> tuple[str, str]:
    """chat-1: the lead names their CRM and their renewal month; both are proposed."""
    await start(http, "chat-1")
    assert (
        await say(http, "chat-1", role="subject", text="We run our sales on Pipewise.")
    ).is_success
    assert (await say(http, "chat-1", role="subject", text="Renewal is every October.")).is_success
    proposals = [
        stated("crm", "Pipewise", 0, "on Pipewise"),
        stated("renewal_month", "October", 1, "every October"),
    ]
    ended = await end(http, "chat-1", proposals=proposals)
    assert ended.status_code == 200, ended.text
    crm, renewal = (p["change_id"] for p in ended.json()["proposals"])
    return crm, renewal


async def status(http: httpx.AsyncClient, change_id: str) -> Any:
    response = await http.get(f"/v1/subjects/me/proposals/{change_id}", headers=AGENT)
    return response.json()["status"]


async def test_context_suggests_a_question_for_every_pending_change(
    http: httpx.AsyncClient,
) -> None:
    crm, renewal = await first_chat(http)
    context = (await http.post("/v1/subjects/me/context", json={}, headers=AGENT)).json()
    asks = {n["ref"]: n["question"] for n in context["to_confirm"]}
    assert asks == {
        crm: "Is it right that your CRM is Pipewise?",
        renewal: "Is it right that your renewal month is October?",
    }
    assert f"Ask: Is it right that your CRM is Pipewise? (change {crm})" in context["prompt"]
    # a note, not a quotation: nothing the lead said is quoted back
    assert "on Pipewise" not in str(asks)


async def test_the_subjects_answers_confirm_and_decline_when_the_session_ends(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    crm, renewal = await first_chat(http)
    await start(http, "chat-2")
    asked = await say(http, "chat-2", role="agent", text="Is Pipewise still your CRM?", asks=crm)
    assert asked.is_success
    yes = await say(http, "chat-2", role="subject", text="Yes, still Pipewise.", confirms=crm)
    assert yes.json()["index"] == 1
    asked = await say(http, "chat-2", role="agent", text="October renewal?", asks=renewal)
    assert asked.is_success
    no = await say(http, "chat-2", role="subject", text="No, we renew in March.", declines=renewal)
    assert no.is_success
    # nothing is decided before the session is recorded
    assert (await status(http, crm), await status(http, renewal)) == ("pending", "pending")

    ended = await end(http, "chat-2")
    assert ended.status_code == 200, ended.text
    decided = [(d["change_id"], d["status"]) for d in ended.json()["decided"]]
    assert decided == [(crm, "confirmed"), (renewal, "rejected")]
    assert (await status(http, crm), await status(http, renewal)) == ("confirmed", "rejected")
    lead = ports.ledger.subject("t1", ports.ledger.subject_id_for("t1", "lead", LEAD))
    assert lead.confirmed_in[UUID(crm)] == ("chat-2", 1)
    assert lead.fields["crm"].confirmed_by.kind.value == "subject"

    # ending again is idempotent: the same answer, no second decision
    again = await end(http, "chat-2")
    assert again.status_code == 200
    assert again.json() == ended.json()
    assert ports.ledger.subject("t1", lead.id).version == lead.version


async def test_an_agent_cannot_confirm_on_its_own_authority(http: httpx.AsyncClient) -> None:
    crm, _ = await first_chat(http)
    await start(http, "chat-2")
    line = await say(http, "chat-2", role="agent", text="I confirm it for them.", confirms=crm)
    assert line.status_code == 422
    assert (line.json()["error"], line.json()["field"]) == ("InvalidParameterError", "confirms")
    both = await say(http, "chat-2", role="subject", text="Yes and no.", confirms=crm, declines=crm)
    assert both.status_code == 422


async def test_only_a_pending_change_of_this_subject_can_be_answered(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    _, renewal = await first_chat(http)
    await start(http, "chat-2")
    unknown = "00000000-0000-4000-8000-000000000001"
    response = await say(http, "chat-2", role="agent", text="Right?", asks=unknown)
    assert (response.status_code, response.json()["error"]) == (404, "ChangeNotFoundError")
    assert (await say(http, "chat-2", role="agent", text="October?", asks=renewal)).is_success
    lead = ports.ledger.subject_id_for("t1", "lead", LEAD)
    approve = f"/v1/subjects/{lead}/proposals/{renewal}/approve"
    assert (await http.post(approve, json={}, headers=REVIEWER)).is_success
    response = await say(http, "chat-2", role="subject", text="Yes.", confirms=renewal)
    assert (response.status_code, response.json()["error"]) == (409, "ChangeNotPendingError")


async def test_a_change_decided_while_the_session_was_open_is_left_as_it_is(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    crm, _ = await first_chat(http)
    await start(http, "chat-2")
    assert (await say(http, "chat-2", role="agent", text="Pipewise?", asks=crm)).is_success
    assert (
        await say(http, "chat-2", role="subject", text="Not Pipewise.", declines=crm)
    ).is_success
    lead = ports.ledger.subject_id_for("t1", "lead", LEAD)
    approve = f"/v1/subjects/{lead}/proposals/{crm}/approve"
    assert (await http.post(approve, json={}, headers=REVIEWER)).is_success
    ended = await end(http, "chat-2")
    assert ended.status_code == 200, ended.text
    assert await status(http, crm) == "confirmed"
