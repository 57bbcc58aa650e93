"""Fuzzing the whole API from its own OpenAPI schema, as a service and as an agent: whatever
schemathesis sends, nothing answers 5xx, and every answer conforms to the schema (status code,
content type, headers, body).

The app runs in-process under uvicorn on loopback, with every part configured (recall,
sessions, sync store), so no route can hide behind a 503.

Bounded by `FACTLEDGER_FUZZ_EXAMPLES` (examples per operation and token): the default keeps
`make test` fast (a few hundred cases); `FACTLEDGER_FUZZ_EXAMPLES=100` runs about three
thousand cases per token.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from support.api_harness import TEST_AUTH, bearer, build_ports, line, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = int(os.environ.get("FACTLEDGER_FUZZ_EXAMPLES", "5"))
CALLERS = {
    "agent": bearer(token(Role.AGENT, kind="lead", ref="fuzz-1")),
    "service": bearer(token(Role.SERVICE)),
}
ENDED, OPEN = "fuzz-ended", "fuzz-open"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# One app for the schema and the server; its ports are only ever used on the server's loop.
# Rate limits are off here: every case comes from one address, and once its failed
# authentications ran out, the limiter would answer most of the run with 429s and leave the
# routes untested (the limits have their own tests, tests/e2e/test_api_rate_limits.py).
APP = create_app(
    ports=build_ports(ManualClock()), auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False)
)
# The event stream never ends, so a fuzz case would wait on it forever; its parameters and
# roles have their own tests (tests/e2e/test_event_stream.py, test_api_roles.py).
schema = schemathesis.openapi.from_dict(APP.openapi()).exclude(path="/v1/events/stream")
# The history import's body is NDJSON text (its schema: a string); sent as its UTF-8 bytes.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@dataclass(frozen=True, slots=True)
class Scene:
    """What exists on the server before fuzzing, for cases to aim at."""

    url: str
    subject_id: str  # the agent token's subject
    change_id: str  # a pending proposal of that subject
    sessions: tuple[str, str] = (ENDED, OPEN)


def set_the_scene(url: str) -> Scene:
    service, agent = CALLERS["service"], CALLERS["agent"]
    me = f"{url}/v1/subjects/me"
    subject = {"kind": "lead", "external_ref": "fuzz-1"}
    created = httpx.post(f"{url}/v1/subjects", json=subject, headers=service).raise_for_status()
    for session in (ENDED, OPEN):
        start = {"session_id": session, "channel": "whatsapp"}
        httpx.post(f"{me}/sessions", json=start, headers=agent).raise_for_status()
        message = {"role": "subject", "text": "We work with Supplier A."}
        url_messages = f"{me}/sessions/{session}/messages"
        httpx.post(**line(url_messages, message, agent)).raise_for_status()
    httpx.post(f"{me}/sessions/{ENDED}/end", json={}, headers=agent).raise_for_status()
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "stated",
        "evidence": {"session_id": ENDED, "message_index": 0, "quote": "Supplier A"},
    }
    change = httpx.post(f"{me}/proposals", json=proposal, headers=agent).raise_for_status()
    return Scene(url, str(created.json()["subject_id"]), str(change.json()["change_id"]))


@pytest.fixture(scope="module")
def live() -> Iterator[Scene]:
    """The server, with a subject, an ended and an open session and a pending proposal."""
    port = free_port()
    config = uvicorn.Config(APP, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield set_the_scene(f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# Every other case addresses what exists (random ids only ever reach a 404).
_TURN = itertools.count()


def aim(case: Any, caller: str, scene: Scene) -> None:
    parameters = case.path_parameters or {}
    turn = next(_TURN)
    if turn % 2:
        return
    if "subject" in parameters:
        parameters["subject"] = "me" if caller == "agent" else scene.subject_id
    if "session_id" in parameters:
        parameters["session_id"] = scene.sessions[turn // 2 % 2]
    if "change_id" in parameters:
        parameters["change_id"] = scene.change_id


@pytest.mark.parametrize("caller", sorted(CALLERS))
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_the_api_fail_or_break_its_schema(
    case: Any, caller: str, live: Scene
) -> None:
    aim(case, caller, live)
    response = case.call(base_url=live.url, headers=CALLERS[caller])
    case.validate_response(response, checks=CHECKS, headers=CALLERS[caller])
    if response.status_code >= 400:
        # One error shape for the whole API.
        body = response.json()
        assert {"error", "detail"} <= set(body) <= {"error", "detail", "field"}, body
