"""The MCP tools through the SDK's in-process client: the story, identity from the token only,
the API's error bodies, and recall's budget over a stalled backend."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx
import pytest
import structlog
from mcp import Client
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, token
from support.key_stores import pinned_subject_id
from support.mcp_story import Relay, call, error, http_relay, tell_story

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.mcp.server import STATUS_META, build_server
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.recall.policy import RecallPolicies
from factledger.testing.manual_clock import ManualClock
from factledger.testing.stalling_backend import StallingBackend

pytestmark = pytest.mark.serial

REF, OTHER_REF = "crm-mcp", "crm-mcp-other"
AGENT = token(Role.AGENT, kind="lead", ref=REF, principal_id="voice-bot")
RECALL_BUDGET_S, SLACK_S = 1.0, 0.5


def registered(ports: Runtime) -> Runtime:
    for ref in (REF, OTHER_REF):
        ports.ledger.register_subject(RegisterSubject("t1", "lead", ref))
    return ports


def stream_lengths(ports: Runtime) -> list[int]:
    return [
        len(list(ports.ledger.events.get(pinned_subject_id("t1", "lead", ref))))
        for ref in (REF, OTHER_REF)
    ]


def client_for(ports: Runtime, jwt: str = AGENT) -> Client:
    state = create_app(ports=ports, auth=TEST_AUTH).state.api
    verifier = TokenVerifier(TEST_AUTH)
    return Client(build_server(state, lambda _: verifier.verify(jwt)))


# The client is entered in each test, not in a fixture: the SDK's task group must be left in
# the task that entered it, and pytest-asyncio tears fixtures down in another.


def relay_for(channel: httpx.AsyncClient) -> Relay:
    """The platform's channel relays the subject's lines with a service token."""
    subject_id = str(pinned_subject_id("t1", "lead", REF))
    return http_relay(channel, subject_id, bearer(token(Role.SERVICE)))


async def test_the_story_runs_through_the_tools_and_logs_none_of_it(ports: Runtime) -> None:
    app = create_app(ports=registered(ports), auth=TEST_AUTH)
    with structlog.testing.capture_logs() as logs:
        async with client_for(ports) as agent, asgi_client(app) as channel:
            await tell_story(agent, relay_for(channel))
    assert logs
    for said in ("thirty electric vans", "Yes, that's right", "How many vans"):
        assert said not in repr(logs)


async def test_an_argument_naming_a_subject_or_tenant_fails_and_records_nothing(
    ports: Runtime,
) -> None:
    other = str(pinned_subject_id("t1", "lead", OTHER_REF))
    before = stream_lengths(registered(ports))
    proposal = {"field": "fleet", "value": {"type": "text", "value": "x"}, "origin": "inferred"}
    async with client_for(ports) as agent:
        for claim in ({"subject": other}, {"subject_id": other}, {"tenant": "t2"}):
            refused = error(await call(agent, "propose_change", **proposal, **claim))
            (name,) = claim
            assert refused == {
                "error": "ValidationError",
                "detail": f"{name}: is not allowed",
                "field": name,
            }
        context = await call(agent, "get_context", subject=other)
    assert error(context)["field"] == "subject"
    assert stream_lengths(ports) == before


async def test_a_token_not_bound_to_a_subject_may_not_use_the_tools(ports: Runtime) -> None:
    async with client_for(registered(ports), token(Role.SERVICE)) as service:
        refused = error(await call(service, "recall", query="vans"))
    assert refused["error"] == "PermissionDeniedError"


async def test_an_expired_token_is_the_apis_401_body(ports: Runtime) -> None:
    stale = token(Role.AGENT, kind="lead", ref=REF, ttl=timedelta(seconds=-3600))
    async with client_for(registered(ports), stale) as client:
        result = await call(client, "recall", query="vans")
    assert error(result) == {"error": "AuthenticationError", "detail": "token expired"}
    assert result.meta is not None
    assert result.meta[STATUS_META] == 401


async def test_an_unknown_tool_name_is_refused_and_not_logged_as_sent(ports: Runtime) -> None:
    made_up = "exfiltrate_" + "the-callers-own-words-" * 200
    async with client_for(registered(ports)) as agent:
        with structlog.testing.capture_logs() as logs:
            result = await call(agent, made_up)
    assert error(result)["field"] == "name"
    failed = [e for e in logs if e["event"] == "mcp.tool_failed"]
    assert [e["tool"] for e in failed] == ["(unknown)"]
    assert "the-callers-own-words" not in repr(logs)


async def test_a_rule_broken_in_the_ledger_is_the_apis_error_not_a_trace(ports: Runtime) -> None:
    unknown = "5a1c7b9e-1f0e-4a8e-9a55-0f3f0b7c2a11"
    async with client_for(registered(ports)) as agent:
        await call(agent, "start_session", session_id="rule-1", channel="voice")
        result = await call(
            agent, "record_message", session_id="rule-1", role="agent", text="Ok?", asks=unknown
        )
    refused = error(result)
    assert refused["error"] == "ChangeNotFoundError"
    assert "Traceback" not in refused["detail"]


async def test_a_stalled_backend_still_answers_recall_within_the_budget() -> None:
    clock = ManualClock()
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    stalled = StallingBackend(inner, stall_s=30.0)
    ports = registered(build_ports(clock, memory=stalled, policies=RecallPolicies()))
    async with client_for(ports) as client:
        started = time.monotonic()
        result = await call(client, "recall", query="electric vans")
        elapsed = time.monotonic() - started
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["degraded"] == "timeout"
    assert elapsed < RECALL_BUDGET_S + SLACK_S
    assert stalled.calls >= 1
