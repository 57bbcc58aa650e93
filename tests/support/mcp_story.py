"""A short agent story told through the MCP tools, by any MCP client (in process, stdio, HTTP):
two calls, a stated proposal, the agent's question and the subject's yes, recall, and a forget.

The agent's token writes the agent's lines only; the subject's words come from the channel
that heard them (`Relay`: a service token over HTTP). Without a relay (stdio, where no HTTP
API runs beside the tool server) the story proposes what the agent inferred instead.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from mcp import Client
from mcp_types import CallToolResult

EXPECTED_TOOLS = {
    "get_context",
    "get_profile",
    "recall",
    "start_session",
    "record_message",
    "end_session",
    "propose_change",
    "forget",
}
# The channel appends one of the subject's lines to a session: (session id, text).
Relay = Callable[[str, str], Awaitable[None]]


def answer(result: CallToolResult) -> dict[str, Any]:
    """The JSON answer of a successful call (the text and the structured content agree)."""
    assert not result.is_error, result.content
    text = result.content[0]
    body: dict[str, Any] = json.loads(getattr(text, "text", ""))
    assert result.structured_content == body
    return body


def error(result: CallToolResult) -> dict[str, Any]:
    """The API's error body of a failed call (text only: the output schema describes answers)."""
    assert result.is_error, result.content
    assert result.structured_content is None
    body: dict[str, Any] = json.loads(getattr(result.content[0], "text", ""))
    assert set(body) <= {"error", "detail", "field"}
    return body


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    return result


def http_relay(channel: httpx.AsyncClient, subject_id: str, headers: dict[str, str]) -> Relay:
    """The channel's relay of the subject's lines over HTTP, with the service's token."""

    async def relay(session_id: str, text: str) -> None:
        url = f"/v1/subjects/{subject_id}/sessions/{session_id}/messages"
        relayed = await channel.post(url, json={"role": "subject", "text": text}, headers=headers)
        assert relayed.is_success, relayed.text

    return relay


async def converse(
    client: Client,
    session_id: str,
    lines: list[tuple[str, str]],
    relay: Relay | None = None,
    **end: Any,
) -> Any:
    """The agent's lines through the tools, the subject's through the channel's `relay`."""
    answer(await call(client, "start_session", session_id=session_id, channel="voice"))
    for role, text in lines:
        if role == "subject":
            assert relay is not None, "the subject's lines come through the channel"
            await relay(session_id, text)
            continue
        recorded = answer(
            await call(client, "record_message", session_id=session_id, role=role, text=text)
        )
        assert recorded["kept"] is True
    return answer(await call(client, "end_session", session_id=session_id, **end))


async def tell_story(client: Client, relay: Relay | None = None) -> None:
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == EXPECTED_TOOLS
    assert all("subject" not in tool.input_schema.get("properties", {}) for tool in listed.tools)

    opening = answer(await call(client, "get_context", topic="fleet"))
    assert opening["profile"] == []
    assert opening["degraded"] is None
    assert isinstance(opening["prompt"], str)

    answer(await call(client, "start_session", session_id="mcp-1", channel="voice"))
    asked = "How many vans do you run?"
    answer(await call(client, "record_message", session_id="mcp-1", role="agent", text=asked))
    forged = await call(
        client, "record_message", session_id="mcp-1", role="subject", text="We run 300 vans."
    )
    assert error(forged)["error"] == "PermissionDeniedError"
    proposal: dict[str, Any] = {
        "field": "fleet",
        "value": {"type": "text", "value": "thirty electric vans"},
        "origin": "inferred",
    }
    if relay is not None:
        await relay("mcp-1", "We run thirty electric vans.")
        evidence = {"session_id": "mcp-1", "message_index": 1, "quote": "thirty electric vans"}
        proposal |= {"origin": "stated", "evidence": evidence}
    ended = answer(await call(client, "end_session", session_id="mcp-1", proposals=[proposal]))
    (proposed,) = ended["proposals"]
    assert (proposed["status"], proposed["field"]) == ("pending", "fleet")
    if relay is None:
        # Without the channel the agent can only infer, and an inference goes to reviewers:
        # it is never put to the subject as a question.
        context = answer(await call(client, "get_context", topic="fleet"))
        assert context["to_confirm"] == []
        return

    answer(await call(client, "start_session", session_id="mcp-2", channel="voice"))
    question = {"role": "agent", "text": "Thirty electric vans, is that right?"}
    answer(
        await call(
            client, "record_message", session_id="mcp-2", asks=proposed["change_id"], **question
        )
    )
    # A yes that restates the value ("Yes, thirty vans is right") is left pending by the
    # answer judge (ADR 0080 records it); this story is about the tools, not the judge.
    await relay("mcp-2", "Yes, that's right.")
    decided = answer(await call(client, "end_session", session_id="mcp-2"))
    assert [(d["change_id"], d["status"]) for d in decided["decided"]] == [
        (proposed["change_id"], "confirmed")
    ]

    context = answer(await call(client, "get_context", topic="fleet"))
    assert any("thirty electric vans" in note["text"] for note in context["profile"])
    turn = answer(await call(client, "recall", query="how many electric vans"))
    assert set(turn) >= {"notes", "excerpts", "degraded", "prompt"}

    forgotten = answer(await call(client, "forget", field="fleet", reason="the subject asked"))
    assert forgotten["applied"] is True
    after = answer(await call(client, "get_context", topic="fleet"))
    assert not any("thirty electric vans" in note["text"] for note in after["profile"])
