"""A short agent story told through the MCP tools, by any MCP client (in process, stdio, HTTP):
two calls, a stated proposal, the subject's confirmation, recall, and a forget."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp_types import CallToolResult

EXPECTED_TOOLS = {
    "get_context",
    "recall",
    "start_session",
    "record_message",
    "end_session",
    "propose_change",
    "confirm_change",
    "forget",
}


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


async def converse(
    client: Client, session_id: str, lines: list[tuple[str, str]], **end: Any
) -> Any:
    answer(await call(client, "start_session", session_id=session_id, channel="voice"))
    for role, text in lines:
        recorded = answer(
            await call(client, "record_message", session_id=session_id, role=role, text=text)
        )
        assert recorded["kept"] is True
    return answer(await call(client, "end_session", session_id=session_id, **end))


async def tell_story(client: Client) -> None:
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == EXPECTED_TOOLS
    assert all("subject" not in tool.input_schema.get("properties", {}) for tool in listed.tools)

    opening = answer(await call(client, "get_context", topic="fleet"))
    assert opening["profile"] == []
    assert opening["degraded"] is None
    assert isinstance(opening["prompt"], str)

    proposal = {
        "field": "fleet",
        "value": {"type": "text", "value": "thirty electric vans"},
        "origin": "stated",
        "evidence": {"session_id": "mcp-1", "message_index": 1, "quote": "thirty electric vans"},
    }
    ended = await converse(
        client,
        "mcp-1",
        [("agent", "How many vans do you run?"), ("subject", "We run thirty electric vans.")],
        proposals=[proposal],
    )
    (proposed,) = ended["proposals"]
    assert (proposed["status"], proposed["field"]) == ("pending", "fleet")

    await converse(client, "mcp-2", [("subject", "Yes, thirty vans is right.")])
    evidence = {"session_id": "mcp-2", "message_index": 0, "quote": "Yes, thirty vans is right"}
    decided = answer(
        await call(client, "confirm_change", change_id=proposed["change_id"], evidence=evidence)
    )
    assert (decided["status"], decided["applied"]) == ("confirmed", True)

    context = answer(await call(client, "get_context", topic="fleet"))
    assert any("thirty electric vans" in note["text"] for note in context["profile"])
    turn = answer(await call(client, "recall", query="how many electric vans"))
    assert set(turn) >= {"notes", "excerpts", "degraded", "prompt"}

    forgotten = answer(await call(client, "forget", field="fleet", reason="the subject asked"))
    assert forgotten["applied"] is True
    after = answer(await call(client, "get_context", topic="fleet"))
    assert not any("thirty electric vans" in note["text"] for note in after["profile"])
