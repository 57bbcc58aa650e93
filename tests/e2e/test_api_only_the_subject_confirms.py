"""Over HTTP, only the subject confirms: the channel relays their words (an agent's token may
not write them), and a confirmation is their yes to the agent's question about that change,
as the answer classifier hears it. Each forgery of the audit is refused here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, token
from support.key_stores import pinned_subject_id

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role

LEAD = "crm-2929"
LEAD_ID = str(pinned_subject_id("t1", "lead", LEAD))
AGENT = bearer(token(Role.AGENT, kind="lead", ref=LEAD, principal_id="chat-bot"))
CHANNEL = bearer(token(Role.SERVICE, principal_id="chat-platform"))
REVIEWER = bearer(token(Role.REVIEWER))
SUBJECT = f"/v1/subjects/{LEAD_ID}"


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await client.post("/v1/subjects", json=body, headers=CHANNEL)).is_success
        yield client


async def start(http: httpx.AsyncClient, session_id: str) -> None:
    body = {"session_id": session_id, "channel": "chat"}
    assert (await http.post("/v1/subjects/me/sessions", json=body, headers=AGENT)).is_success


async def agent_says(
    http: httpx.AsyncClient, session_id: str, text: str, **marks: Any
) -> httpx.Response:
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    return await http.post(url, json={"role": "agent", "text": text, **marks}, headers=AGENT)


async def subject_says(
    http: httpx.AsyncClient, session_id: str, text: str, **marks: Any
) -> httpx.Response:
    """The channel that heard the subject relays the line, with the platform's service token."""
    url = f"{SUBJECT}/sessions/{session_id}/messages"
    return await http.post(url, json={"role": "subject", "text": text, **marks}, headers=CHANNEL)


async def end(http: httpx.AsyncClient, session_id: str, **body: Any) -> dict[str, Any]:
    url = f"/v1/subjects/me/sessions/{session_id}/end"
    ended = await http.post(url, json=body, headers=AGENT)
    assert ended.status_code == 200, ended.text
    answer: dict[str, Any] = ended.json()
    return answer


def proposal(field: str, value: str, index: int, quote: str, origin: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": origin,
        "evidence": {"session_id": "chat-1", "message_index": index, "quote": quote},
    }


async def first_chat(http: httpx.AsyncClient) -> dict[str, str]:
    """chat-1: the lead gives their name and their supplier; a budget is inferred from an
    unrelated line (the made-up value of the audit). All three are pending."""
    await start(http, "chat-1")
    for line in ("I am Dana from Northwind.", "We buy from Supplier A.", "Nice weather today."):
        assert (await subject_says(http, "chat-1", line)).is_success
    proposals = [
        proposal("contact_name", "Dana", 0, "I am Dana", "stated"),
        proposal("supplier", "Supplier A", 1, "Supplier A", "stated"),
        proposal("budget", "40000 EUR", 2, "Nice weather today", "inferred"),
    ]
    ended = await end(http, "chat-1", proposals=proposals)
    return {p["field"]: p["change_id"] for p in ended["proposals"]}


async def status(http: httpx.AsyncClient, change_id: str) -> str:
    response = await http.get(f"{SUBJECT}/proposals/{change_id}", headers=CHANNEL)
    answer: str = response.json()["status"]
    return answer


async def profile_fields(http: httpx.AsyncClient) -> set[str]:
    profile = (await http.get(f"{SUBJECT}/profile", headers=REVIEWER)).json()
    return set(profile["fields"])


async def test_an_agent_token_may_not_write_the_subjects_words(http: httpx.AsyncClient) -> None:
    await start(http, "chat-1")
    url = "/v1/subjects/me/sessions/chat-1/messages"
    forged = await http.post(url, json={"role": "subject", "text": "Yes."}, headers=AGENT)
    assert forged.status_code == 403
    assert forged.json()["error"] == "PermissionDeniedError"
    assert "the subject's words come from the channel that heard them" in forged.json()["detail"]
    assert (await agent_says(http, "chat-1", "What is your budget?")).is_success
    assert (await subject_says(http, "chat-1", "Around forty thousand.")).is_success
    transcript = (await http.get(url, headers=AGENT)).json()["messages"]
    assert [m["role"] for m in transcript] == ["agent", "subject"]


async def test_an_agent_cannot_confirm_its_own_made_up_value(http: httpx.AsyncClient) -> None:
    changes = await first_chat(http)
    budget = changes["budget"]
    await start(http, "chat-2")
    url = "/v1/subjects/me/sessions/chat-2/messages"
    line = {"role": "subject", "text": "ok", "confirms": budget}
    assert (await http.post(url, json=line, headers=AGENT)).status_code == 403
    # Nor can a service put "ok" in the subject's mouth as a confirmation: nobody asked.
    unasked = await subject_says(http, "chat-2", "ok", confirms=budget)
    assert (unasked.status_code, unasked.json()["field"]) == (422, "confirms")
    await end(http, "chat-2")
    evidence = {"session_id": "chat-1", "message_index": 2, "quote": "Nice weather today"}
    relayed = await http.post(
        f"/v1/subjects/me/proposals/{budget}/confirm", json={"evidence": evidence}, headers=AGENT
    )
    assert relayed.status_code == 403
    assert "may not relay the subject's confirmation" in relayed.json()["detail"]
    assert await status(http, budget) == "pending"
    assert "budget" not in await profile_fields(http)


async def test_the_subjects_yes_to_the_question_confirms_that_change(
    http: httpx.AsyncClient,
) -> None:
    changes = await first_chat(http)
    await start(http, "chat-2")
    asked = await agent_says(
        http, "chat-2", "Is Supplier A still your supplier?", asks=changes["supplier"]
    )
    assert asked.is_success
    assert (await subject_says(http, "chat-2", "Yes, that's right.")).is_success
    ended = await end(http, "chat-2")
    decided = [(d["change_id"], d["status"]) for d in ended["decided"]]
    assert decided == [(changes["supplier"], "confirmed")]
    assert await status(http, changes["supplier"]) == "confirmed"
    assert await status(http, changes["budget"]) == "pending"


async def test_a_yes_to_the_name_question_never_confirms_the_budget(
    http: httpx.AsyncClient,
) -> None:
    changes = await first_chat(http)
    await start(http, "chat-2")
    asks_name = {"asks": changes["contact_name"]}
    assert (await agent_says(http, "chat-2", "Is your name Dana?", **asks_name)).is_success
    stolen = await subject_says(http, "chat-2", "Yes.", confirms=changes["budget"])
    assert stolen.status_code == 422
    assert stolen.json()["field"] == "confirms"
    assert "did not ask about change" in stolen.json()["detail"]
    assert (await subject_says(http, "chat-2", "Yes.")).is_success
    ended = await end(http, "chat-2")
    assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [
        (changes["contact_name"], "confirmed")
    ]
    evidence = {"session_id": "chat-2", "message_index": 1, "quote": "Yes."}
    relayed = await http.post(
        f"{SUBJECT}/proposals/{changes['budget']}/confirm",
        json={"evidence": evidence},
        headers=CHANNEL,
    )
    assert relayed.status_code == 422
    assert relayed.json()["field"] == "evidence"
    assert await status(http, changes["budget"]) == "pending"
    assert "budget" not in await profile_fields(http)


async def test_a_no_is_never_taken_for_a_yes(http: httpx.AsyncClient) -> None:
    changes = await first_chat(http)
    supplier = changes["supplier"]
    await start(http, "chat-2")
    asks = {"asks": supplier}
    assert (await agent_says(http, "chat-2", "You buy from Supplier A?", **asks)).is_success
    declined = "No, we left Supplier A last spring."
    forged = await subject_says(http, "chat-2", declined, confirms=supplier)
    assert forged.status_code == 422
    assert forged.json()["field"] == "confirms"
    assert "is not a yes to the question" in forged.json()["detail"]
    assert (await subject_says(http, "chat-2", declined)).is_success
    ended = await end(http, "chat-2")
    assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [(supplier, "rejected")]
    assert "supplier" not in await profile_fields(http)


async def test_the_channel_cannot_cite_a_decline_as_a_confirmation(
    http: httpx.AsyncClient,
) -> None:
    changes = await first_chat(http)
    supplier = changes["supplier"]
    await start(http, "chat-2")
    assert (await agent_says(http, "chat-2", "Still with Supplier A?")).is_success
    assert (await subject_says(http, "chat-2", "No, we dropped Supplier A in March.")).is_success
    await end(http, "chat-2")
    evidence = {"session_id": "chat-2", "message_index": 1, "quote": "we dropped Supplier A"}
    relayed = await http.post(
        f"{SUBJECT}/proposals/{supplier}/confirm", json={"evidence": evidence}, headers=CHANNEL
    )
    assert relayed.status_code == 422
    assert relayed.json()["field"] == "evidence"
    assert await status(http, supplier) == "pending"


async def test_a_question_is_the_agents_and_about_a_pending_change(
    http: httpx.AsyncClient,
) -> None:
    changes = await first_chat(http)
    await start(http, "chat-2")
    wrong = await subject_says(http, "chat-2", "Is it?", asks=changes["budget"])
    assert (wrong.status_code, wrong.json()["field"]) == (422, "asks")
    unknown = "00000000-0000-4000-8000-000000000001"
    missing = await agent_says(http, "chat-2", "Is it right?", asks=unknown)
    assert (missing.status_code, missing.json()["error"]) == (404, "ChangeNotFoundError")
    both = await agent_says(http, "chat-2", "Is it?", asks=changes["budget"], confirms=unknown)
    assert both.status_code == 422


async def test_without_the_answer_classifier_nothing_is_confirmed_by_conversation(
    ports: Runtime,
) -> None:
    blind = replace(ports, judge=None)
    async with asgi_client(create_app(ports=blind, auth=TEST_AUTH)) as http:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await http.post("/v1/subjects", json=body, headers=CHANNEL)).is_success
        changes = await first_chat(http)
        supplier = changes["supplier"]
        await start(http, "chat-2")
        assert (await agent_says(http, "chat-2", "Supplier A?", asks=supplier)).is_success
        stated = await subject_says(http, "chat-2", "Yes, still them.", confirms=supplier)
        assert stated.status_code == 503
        assert stated.json()["error"] == "ServiceUnavailableError"
        assert (await subject_says(http, "chat-2", "Yes, still them.")).is_success
        ended = await end(http, "chat-2")
        assert ended["decided"] == []
        assert await status(http, supplier) == "pending"
        approve = f"{SUBJECT}/proposals/{supplier}/approve"
        assert (await http.post(approve, json={}, headers=REVIEWER)).is_success
        assert await status(http, supplier) == "confirmed"


async def test_every_decision_records_who_relayed_the_subjects_words(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    """The channel's principal stands beside the subject's words: in the change, the profile,
    the field history and the events; a reviewer's approval names the reviewer and no relay."""
    changes = await first_chat(http)
    await start(http, "chat-2")
    ask_supplier = {"asks": changes["supplier"]}
    assert (await agent_says(http, "chat-2", "Still Supplier A?", **ask_supplier)).is_success
    assert (await subject_says(http, "chat-2", "Yes, still them.")).is_success
    ask_budget = {"asks": changes["budget"]}
    assert (await agent_says(http, "chat-2", "Budget 40000 EUR?", **ask_budget)).is_success
    assert (await subject_says(http, "chat-2", "No, nothing like that.")).is_success
    await end(http, "chat-2")
    name = changes["contact_name"]
    assert await http.post(f"{SUBJECT}/proposals/{name}/approve", json={}, headers=REVIEWER)

    channel = {"kind": "system", "id": "chat-platform"}
    supplier = await http.get(f"{SUBJECT}/proposals/{changes['supplier']}", headers=CHANNEL)
    assert (supplier.json()["status"], supplier.json()["relayed_by"]) == ("confirmed", channel)
    budget = (await http.get(f"{SUBJECT}/proposals/{changes['budget']}", headers=CHANNEL)).json()
    assert (budget["status"], budget["relayed_by"]) == ("rejected", channel)
    approved = (await http.get(f"{SUBJECT}/proposals/{name}", headers=CHANNEL)).json()
    assert (approved["status"], approved["relayed_by"]) == ("confirmed", None)

    ports.catch_up()
    fields = (await http.get(f"{SUBJECT}/profile", headers=REVIEWER)).json()["fields"]
    assert fields["supplier"]["relayed_by"] == channel
    assert fields["supplier"]["confirmed_by"]["kind"] == "subject"
    assert fields["contact_name"]["relayed_by"] is None
    assert fields["contact_name"]["confirmed_by"]["kind"] == "staff"
    history = (await http.get(f"{SUBJECT}/profile/history", headers=REVIEWER)).json()["entries"]
    by_field = {entry["field"]: entry for entry in history}
    assert by_field["supplier"]["relayed_by"] == channel
    assert by_field["supplier"]["confirmation"] == {
        "session_id": "chat-2",
        "message_index": 1,
        "quote": "Yes, still them.",
    }
    assert (by_field["contact_name"]["relayed_by"], by_field["contact_name"]["confirmation"]) == (
        None,
        None,
    )

    analyst = bearer(token(Role.ANALYST))
    events = (await http.get(f"{SUBJECT}/events", headers=analyst)).json()["events"]
    decided = {
        e["payload"]["change_id"]: e["payload"]["relayed_by"]
        for e in events
        if e["topic"].endswith(("change_confirmed.v1", "change_rejected.v1"))
    }
    assert decided == {changes["supplier"]: channel, changes["budget"]: channel, name: None}


async def test_the_channel_citing_the_subjects_yes_is_recorded_as_its_relay(
    ports: Runtime,
) -> None:
    """An answer heard while the classifier was down decided nothing; once it is back, the
    channel confirms by citing that yes, and is recorded as the relay of those words."""
    blind = replace(ports, judge=None)
    async with asgi_client(create_app(ports=blind, auth=TEST_AUTH)) as http:
        body = {"kind": "lead", "external_ref": LEAD}
        assert (await http.post("/v1/subjects", json=body, headers=CHANNEL)).is_success
        changes = await first_chat(http)
        supplier = changes["supplier"]
        await start(http, "chat-2")
        assert (await agent_says(http, "chat-2", "Supplier A, right?", asks=supplier)).is_success
        assert (await subject_says(http, "chat-2", "Yes, that's right.")).is_success
        assert (await end(http, "chat-2"))["decided"] == []
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as http:
        evidence = {"session_id": "chat-2", "message_index": 1, "quote": "Yes, that's right."}
        confirm = f"{SUBJECT}/proposals/{supplier}/confirm"
        relayed = await http.post(confirm, json={"evidence": evidence}, headers=CHANNEL)
        assert relayed.status_code == 200, relayed.text
        read = (await http.get(f"{SUBJECT}/proposals/{supplier}", headers=CHANNEL)).json()
        assert (read["status"], read["relayed_by"]) == (
            "confirmed",
            {"kind": "system", "id": "chat-platform"},
        )
