"""What an MCP host reads before and after a call, through the SDK's in-process client: the
server's version, each tool's annotations and output schema (every answer matches it), and
errors that say what to send instead."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import jsonschema
from mcp import Client
from support.api_harness import TEST_AUTH, asgi_client, bearer, token
from support.key_stores import pinned_subject_id
from support.mcp_story import answer, call, converse, error, http_relay

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.mcp.server import build_server
from factledger.application.ledger.commands import RegisterSubject

REF = "crm-mcp-host"
AGENT = token(Role.AGENT, kind="lead", ref=REF, principal_id="voice-bot")
READ_ONLY = {"get_context", "recall", "get_profile"}
IDEMPOTENT = {"start_session", "end_session", "forget"}


SERVICE = bearer(token(Role.SERVICE))


def client_for(ports: Runtime) -> Client:
    ports.ledger.register_subject(RegisterSubject("t1", "lead", REF))
    state = create_app(ports=ports, auth=TEST_AUTH).state.api
    verifier = TokenVerifier(TEST_AUTH)
    return Client(build_server(state, lambda _: verifier.verify(AGENT)))


def stated(session_id: str, index: int, quote: str) -> dict[str, Any]:
    return {
        "field": "fleet",
        "value": {"type": "text", "value": "thirty electric vans"},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": index, "quote": quote},
    }


async def test_the_server_names_its_version(ports: Runtime) -> None:
    async with client_for(ports) as client:
        info = client.server_info
    assert info is not None
    assert (info.name, info.version) == ("factledger", version("factledger"))


async def test_each_tool_says_whether_it_reads_destroys_or_may_be_retried(ports: Runtime) -> None:
    async with client_for(ports) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None, name
        assert tool.title, name
        assert hints.open_world_hint is False, name
        assert bool(hints.read_only_hint) is (name in READ_ONLY), name
        if name not in READ_ONLY:
            assert hints.destructive_hint is (name == "forget"), name
            assert hints.idempotent_hint is (name in IDEMPOTENT), name


async def test_every_answer_matches_its_tools_output_schema(ports: Runtime) -> None:
    app = create_app(ports=ports, auth=TEST_AUTH)
    async with client_for(ports) as client, asgi_client(app) as channel:
        relay = http_relay(channel, str(pinned_subject_id("t1", "lead", REF)), SERVICE)
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        lines = [("agent", "How many vans?"), ("subject", "We run thirty electric vans.")]
        answers = {
            "get_context": answer(await call(client, "get_context", topic="fleet")),
            "recall": answer(await call(client, "recall", query="vans")),
            "end_session": await converse(client, "host-1", lines, relay),
        }
        proposed = answer(await call(client, "propose_change", **stated("host-1", 1, "thirty")))
        answers["propose_change"] = proposed
        answer(await call(client, "start_session", session_id="host-2", channel="voice"))
        asked = {"role": "agent", "text": "Thirty vans?", "asks": proposed["change_id"]}
        answers["record_message"] = answer(
            await call(client, "record_message", session_id="host-2", **asked)
        )
        await relay("host-2", "Yes, that is right.")
        answer(await call(client, "end_session", session_id="host-2"))
        answers["get_profile"] = answer(await call(client, "get_profile"))
        said = answer(await call(client, "get_profile", as_of="2020-01-01T00:00:00+00:00"))
        assert (said["clock"], said["fields"]) == ("said", {})
        answers["forget"] = answer(await call(client, "forget", field="fleet", reason="asked"))
    assert all(schema is not None and schema["type"] == "object" for schema in schemas.values())
    for name, body in answers.items():
        jsonschema.validate(body, schemas[name])
    # A schema that describes nothing would pass any answer: each names the answer's keys.
    assert set(schemas["forget"]["properties"]) == {
        "subject_id",
        "applied",
        "profile_version",
        "field",
        "memory_id",
        "rejected_changes",
        "redacted_changes",
        "forgotten_lines",
        "lines_not_erased",
    }


async def test_forget_with_both_a_field_and_a_memory_says_which_to_send(ports: Runtime) -> None:
    async with client_for(ports) as client:
        both = error(
            await call(client, "forget", field="fleet", memory_id="m-1", reason="the subject asked")
        )
        neither = error(await call(client, "forget", reason="the subject asked"))
    assert both["field"] == "memory_id"
    assert both["detail"].startswith("memory_id: send `field` to forget a profile field or ")
    assert "not both" in both["detail"]
    assert neither["field"] == "field"
    assert "`memory_id` to forget one memory" in neither["detail"]


async def test_a_proposal_citing_an_open_session_says_to_end_it_first(ports: Runtime) -> None:
    async with client_for(ports) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        answer(await call(client, "start_session", session_id="open-1", channel="voice"))
        answer(
            await call(
                client, "record_message", session_id="open-1", role="agent", text="Thirty vans?"
            )
        )
        refused = error(await call(client, "propose_change", **stated("open-1", 0, "Thirty")))
    assert "ended session" in (tools["propose_change"].description or "")
    assert refused["error"] == "EvidenceNotFoundError"
    assert "must cite a message of an ended session" in refused["detail"]
    assert "end the session first, or send the proposal with its end" in refused["detail"]
    assert "no such message" not in refused["detail"]
