"""Through the MCP tools, only the subject confirms: each forgery of the audit, tried by an
agent holding the tools (its token), while the platform's channel relays the subject's lines
over HTTP, is refused; what the subject really answered decides, and the decision names the
channel that relayed it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp import Client
from support.api_harness import TEST_AUTH, asgi_client, bearer, token
from support.key_stores import pinned_subject_id
from support.mcp_story import answer, call, error

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.mcp.server import build_server
from factledger.application.ledger.commands import RegisterSubject

REF = "crm-mcp-29"
SUBJECT_ID = pinned_subject_id("t1", "lead", REF)
SUBJECT = f"/v1/subjects/{SUBJECT_ID}"
AGENT = token(Role.AGENT, kind="lead", ref=REF, principal_id="voice-bot")
CHANNEL = bearer(token(Role.SERVICE, principal_id="voice-platform"))
REVIEWER = bearer(token(Role.REVIEWER))


@asynccontextmanager
async def agent_and_channel(ports: Runtime) -> AsyncIterator[tuple[Client, httpx.AsyncClient]]:
    """The agent's MCP client (its token) and the channel's HTTP client (a service token)."""
    ports.ledger.register_subject(RegisterSubject("t1", "lead", REF))
    app = create_app(ports=ports, auth=TEST_AUTH)
    verifier = TokenVerifier(TEST_AUTH)
    server = build_server(app.state.api, lambda _: verifier.verify(AGENT))
    async with Client(server) as agent, asgi_client(app) as channel:
        yield agent, channel


async def relay(
    channel: httpx.AsyncClient, session_id: str, text: str, **marks: Any
) -> httpx.Response:
    url = f"{SUBJECT}/sessions/{session_id}/messages"
    return await channel.post(url, json={"role": "subject", "text": text, **marks}, headers=CHANNEL)


async def agent_line(agent: Client, session_id: str, text: str, **marks: Any) -> Any:
    return await call(
        agent, "record_message", session_id=session_id, role="agent", text=text, **marks
    )


def proposal(field: str, value: str, index: int, quote: str, origin: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": value},
        "origin": origin,
        "evidence": {"session_id": "call-1", "message_index": index, "quote": quote},
    }


async def first_call(agent: Client, channel: httpx.AsyncClient) -> dict[str, str]:
    """call-1: the lead gives their name and their supplier; the agent makes up a budget
    from an unrelated line. All three are pending."""
    opened = {"session_id": "call-1", "channel": "voice", "started_at": "2025-10-06T09:00:00Z"}
    answer(await call(agent, "start_session", **opened))
    for line in ("I am Dana from Northwind.", "We buy from Supplier A.", "Nice weather today."):
        assert (await relay(channel, "call-1", line)).is_success
    proposals = [
        proposal("contact_name", "Dana", 0, "I am Dana", "stated"),
        proposal("supplier", "Supplier A", 1, "Supplier A", "stated"),
        proposal("budget", "40000 EUR", 2, "Nice weather today", "inferred"),
    ]
    ended = answer(await call(agent, "end_session", session_id="call-1", proposals=proposals))
    return {p["field"]: p["change_id"] for p in ended["proposals"]}


async def change(channel: httpx.AsyncClient, change_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (
        await channel.get(f"{SUBJECT}/proposals/{change_id}", headers=CHANNEL)
    ).json()
    return found


async def test_the_agent_cannot_write_the_subjects_ok_to_its_own_made_up_value(
    ports: Runtime,
) -> None:
    async with agent_and_channel(ports) as (agent, channel):
        changes = await first_call(agent, channel)
        budget = changes["budget"]
        answer(await call(agent, "start_session", session_id="call-2", channel="voice"))
        forged = await call(
            agent, "record_message", session_id="call-2", role="subject", text="ok", confirms=budget
        )
        assert error(forged)["error"] == "PermissionDeniedError"
        own = error(await agent_line(agent, "call-2", "ok", confirms=budget))
        assert (own["error"], own["field"]) == ("InvalidParameterError", "confirms")
        tools = {tool.name for tool in (await agent.list_tools()).tools}
        assert not {"confirm", "confirm_change", "approve"} & tools
        answer(await call(agent, "end_session", session_id="call-2"))
        assert (await change(channel, budget))["status"] == "pending"
        profile = (await channel.get(f"{SUBJECT}/profile", headers=REVIEWER)).json()
        assert "budget" not in profile["fields"]


async def test_a_yes_to_the_agents_name_question_never_confirms_the_budget(
    ports: Runtime,
) -> None:
    async with agent_and_channel(ports) as (agent, channel):
        changes = await first_call(agent, channel)
        answer(await call(agent, "start_session", session_id="call-2", channel="voice"))
        answer(
            await agent_line(agent, "call-2", "Is your name Dana?", asks=changes["contact_name"])
        )
        stolen = await relay(channel, "call-2", "Yes.", confirms=changes["budget"])
        assert (stolen.status_code, stolen.json()["field"]) == (422, "confirms")
        assert (await relay(channel, "call-2", "Yes.")).is_success
        ended = answer(await call(agent, "end_session", session_id="call-2"))
        assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [
            (changes["contact_name"], "confirmed")
        ]
        assert (await change(channel, changes["budget"]))["status"] == "pending"


async def test_a_no_to_the_agents_question_is_never_taken_for_a_yes(ports: Runtime) -> None:
    async with agent_and_channel(ports) as (agent, channel):
        changes = await first_call(agent, channel)
        supplier = changes["supplier"]
        answer(await call(agent, "start_session", session_id="call-2", channel="voice"))
        answer(await agent_line(agent, "call-2", "You buy from Supplier A?", asks=supplier))
        declined = "No, we left Supplier A last spring."
        forged = await relay(channel, "call-2", declined, confirms=supplier)
        assert (forged.status_code, forged.json()["field"]) == (422, "confirms")
        assert "is not a yes to the question" in forged.json()["detail"]
        assert (await relay(channel, "call-2", declined)).is_success
        ended = answer(await call(agent, "end_session", session_id="call-2"))
        assert [(d["change_id"], d["status"]) for d in ended["decided"]] == [(supplier, "rejected")]
        evidence = {"session_id": "call-2", "message_index": 1, "quote": "we left Supplier A"}
        cited = await channel.post(
            f"{SUBJECT}/proposals/{supplier}/confirm", json={"evidence": evidence}, headers=CHANNEL
        )
        assert cited.status_code == 409  # decided already: declined
        assert (await change(channel, supplier))["status"] == "rejected"


async def test_the_decision_names_the_channel_that_relayed_the_answer(ports: Runtime) -> None:
    async with agent_and_channel(ports) as (agent, channel):
        changes = await first_call(agent, channel)
        supplier = changes["supplier"]
        answer(await call(agent, "start_session", session_id="call-2", channel="voice"))
        answer(await agent_line(agent, "call-2", "Still Supplier A?", asks=supplier))
        assert (await relay(channel, "call-2", "Yes, still them.")).is_success
        answer(await call(agent, "end_session", session_id="call-2"))
        decided = await change(channel, supplier)
        assert decided["status"] == "confirmed"
        assert decided["proposed_by"] == {"kind": "agent", "id": "voice-bot"}
        assert decided["relayed_by"] == {"kind": "system", "id": "voice-platform"}
        ports.catch_up()
        profile = (await channel.get(f"{SUBJECT}/profile", headers=REVIEWER)).json()
        assert profile["fields"]["supplier"]["relayed_by"] == decided["relayed_by"]
        # The subject confirms under its id, never its reference (which erasure must shred).
        assert profile["fields"]["supplier"]["confirmed_by"] == {
            "kind": "subject",
            "id": str(SUBJECT_ID),
        }


async def test_the_agents_context_asks_nothing_superseded_or_inferred(ports: Runtime) -> None:
    async with agent_and_channel(ports) as (agent, channel):
        changes = await first_call(agent, channel)
        months_later = {"channel": "voice", "started_at": "2026-01-02T09:00:00Z"}
        answer(await call(agent, "start_session", session_id="call-2", **months_later))
        said = "We left Supplier A, we buy from Supplier C now."
        assert (await relay(channel, "call-2", said)).is_success
        newer = {
            "field": "supplier",
            "value": {"type": "text", "value": "Supplier C"},
            "origin": "stated",
            "evidence": {"session_id": "call-2", "message_index": 0, "quote": "Supplier C"},
        }
        ended = answer(await call(agent, "end_session", session_id="call-2", proposals=[newer]))
        (supplier_c,) = (p["change_id"] for p in ended["proposals"])
        context = answer(await call(agent, "get_context", topic="supplier"))
        asked = {note["ref"] for note in context["to_confirm"]}
        assert asked == {changes["contact_name"], supplier_c}
        assert changes["budget"] not in asked
