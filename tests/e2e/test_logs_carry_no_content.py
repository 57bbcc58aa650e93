"""No log carries what a person said: every 500 the API can be driven to, with a failure
injected into each port the routes use, is logged by type and frames only, in console and JSON
modes alike (structlog's lines and the standard library's), in process and from a real
`factledger serve`."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import support
from support.api_harness import TEST_AUTH, TEST_SECRET, bearer, line, token
from support.canaries import CANARY_BODY, Bomb, Switch, hits

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.log_setup import configure_logging, reset_logging
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.policy import RecallPolicies
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue
from factledger.testing.manual_clock import ManualClock

PORTS = ("ledger", "recall", "session_buffer", "idempotency", "views", "backend", "sync_store")
# The memory backend fails open on every route (recall degrades, readiness reports it): its
# failure must make no 500 at all, and still leave no canary in the logs.
FAILS_OPEN = {"backend"}
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-canary"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER))
ADMIN = bearer(token(Role.ADMIN))
STARTUP_LIMIT_S = 60.0
LINES_PER_500 = 60  # the error line, a chain of causes and their frames (bounded)
SESSION = "wa-canary-1"  # ended: the proposals' evidence
OPEN = "wa-canary-2"  # still open: the session routes' target


def bombed_runtime(switch: Switch) -> Runtime:
    """The harness's in-memory runtime, with every port wrapped in a `Bomb` on `switch`."""

    def bomb(name: str, inner: object) -> Any:
        return Bomb(name, inner, switch)

    clock = ManualClock()
    ledger = cast(
        "Ledger", bomb("ledger", Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore()))
    )
    buffer = bomb("session_buffer", InMemorySessionBuffer())
    sessions = ShortTermMemory(
        SessionPorts(
            buffer=buffer,
            safety=DetectorSafetyFilter(),
            recorder=LedgerSessionRecorder(ledger),
            clock=clock,
        )
    )
    inner = InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock
    )
    backend = ValidatingMemoryBackend(bomb("backend", inner))
    recall = bomb(
        "recall",
        Recall(
            RecallPorts(
                backend=backend, sources=LedgerRecallSources(ledger), policies=RecallPolicies()
            )
        ),
    )
    views = bomb("views", InMemoryViewStore("profile"))
    projection = ProfileProjection(views)
    queue = ReviewQueueProjection(SqliteQueueStore(":memory:"))
    return Runtime(
        ledger=ledger,
        views=views,
        projection=projection,
        profiles=ViewStoreProfileReader(views),
        follower=Follower(ledger, [projection, queue]),
        queue=StoreReviewQueue(queue.store),
        queue_projection=queue,
        backend=backend,
        sessions=sessions,
        session_buffer=buffer,
        recall=recall,
        sync_store=bomb("sync_store", InMemorySyncStore()),
        idempotency=bomb("idempotency", InMemoryIdempotencyStore()),
    )


def proposal(field: str) -> dict[str, Any]:
    return {
        "field": field,
        "value": {"type": "text", "value": f"{CANARY_BODY} value"},
        "origin": "stated",
        "rationale": f"{CANARY_BODY} rationale",
        "evidence": {"session_id": SESSION, "message_index": 0, "quote": CANARY_BODY},
    }


def every_request(subject: str, change: str) -> list[tuple[str, str, Any, dict[str, str]]]:
    """One request per route, each carrying canary text wherever the route takes text."""
    me, key = "/v1/subjects/me", {"Idempotency-Key": "canary-key-0001"}
    theirs = f"/v1/subjects/{subject}/proposals/{change}"
    evidence = {"evidence": proposal("x")["evidence"]}
    session = f"{me}/sessions/{OPEN}"
    return [
        ("GET", "/healthz", None, {}),
        ("GET", "/readyz", None, {}),
        ("GET", "/metrics", None, SERVICE),
        ("GET", "/v1/whoami", None, AGENT),
        ("POST", "/v1/subjects", {"kind": "lead", "external_ref": CANARY_BODY}, SERVICE | key),
        ("GET", f"/v1/subjects/lookup?kind=lead&external_ref={CANARY_BODY}", None, SERVICE),
        ("GET", f"/v1/subjects/{subject}", None, SERVICE),
        ("POST", f"{me}/sessions", {"session_id": "wa-canary-3", "channel": "whatsapp"}, AGENT),
        ("POST", f"{session}/messages", {"role": "subject", "text": CANARY_BODY}, AGENT | key),
        ("GET", f"{session}/messages?last=5", None, AGENT),
        ("GET", session, None, AGENT),
        ("POST", f"{me}/context", {"topic": CANARY_BODY}, AGENT),
        ("POST", f"{me}/recall", {"query": CANARY_BODY}, AGENT),
        ("POST", f"{me}/proposals", proposal("supplier"), AGENT | key),
        ("POST", f"{me}/proposals/{change}/confirm", evidence, AGENT),
        ("GET", f"{me}/proposals/{change}", None, AGENT),
        ("POST", f"{theirs}/approve", {"note": CANARY_BODY}, REVIEWER),
        ("POST", f"{theirs}/reject", {"reason": CANARY_BODY}, REVIEWER),
        ("POST", f"{me}/forget", {"field": "supplier", "reason": CANARY_BODY}, AGENT | key),
        ("GET", f"{me}/profile", None, AGENT),
        ("GET", f"{me}/profile/versions/1", None, AGENT),
        ("GET", f"{me}/profile/history?field=supplier", None, AGENT),
        ("GET", f"{me}/profile/diff?from_version=0&to_version=1", None, AGENT),
        ("GET", "/v1/proposals/pending?limit=10", None, REVIEWER),
        ("GET", f"/v1/subjects/{subject}/events?limit=10", None, ADMIN),
        ("GET", "/v1/dead-letters?limit=10", None, ADMIN),
        ("POST", "/v1/dead-letters/retry", None, ADMIN),
        ("POST", f"/v1/dead-letters/{change}/retry", None, ADMIN),
        ("POST", f"{session}/end", {"summary": {"topic": CANARY_BODY}}, AGENT | key),
    ]


async def set_the_scene(http: httpx.AsyncClient) -> tuple[str, str]:
    """A subject with an ended session, an open one and a pending proposal."""
    body = {"kind": "lead", "external_ref": "crm-canary"}
    subject = (await http.post("/v1/subjects", json=body, headers=SERVICE)).json()["subject_id"]
    for session in (SESSION, OPEN):
        start = {"session_id": session, "channel": "whatsapp"}
        assert (await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)).is_success
        message = {"role": "subject", "text": f"{CANARY_BODY} we use supplier"}
        url = f"/v1/subjects/me/sessions/{session}/messages"
        assert (await http.post(**line(url, message, AGENT))).is_success
    end = f"/v1/subjects/me/sessions/{SESSION}/end"
    assert (await http.post(end, json={}, headers=AGENT)).is_success
    change = await http.post("/v1/subjects/me/proposals", json=proposal("budget"), headers=AGENT)
    assert change.status_code == 201, change.text
    return subject, str(change.json()["change_id"])


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    yield io.StringIO()
    reset_logging()


@pytest.mark.parametrize("json_lines", [False, True], ids=["console", "json"])
async def test_no_500_logs_a_message_a_local_or_a_body(
    json_lines: bool, captured: io.StringIO
) -> None:
    # Given every port wrapped, and the logs of structlog and the standard library captured
    configure_logging(json_lines=json_lines, stream=captured)
    switch = Switch()
    app = create_app(ports=bombed_runtime(switch), auth=TEST_AUTH)
    failed: dict[str, list[str]] = {}
    requests = 0
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as http:
        subject, change = await set_the_scene(http)
        # When each port in turn fails on every call, and every route is asked
        for port in PORTS:
            switch.armed = port
            for method, url, body, headers in every_request(subject, change):
                response = await http.request(method, url, json=body, headers=headers)
                requests += 1
                if response.status_code == 500:
                    failed.setdefault(port, []).append(f"{method} {url}")
                    assert not hits(response.text), (port, url)
    # Then each port's failure made 500s (but the one that fails open), and no log line
    # carries a canary
    assert set(failed) == set(PORTS) - FAILS_OPEN, failed
    logs = captured.getvalue()
    assert logs.count("api.unexpected_error") == sum(len(urls) for urls in failed.values())
    assert "RuntimeError" in logs
    assert hits(logs) == [], logs[:3000]
    # A summary, not a traceback of every frame's locals (thousands of lines per 500, rendered
    # on the event loop while every other request waits).
    errors = sum(len(urls) for urls in failed.values())
    assert len(logs.splitlines()) < requests + LINES_PER_500 * errors


def serve_with_a_fault(data_dir: Path, *, json_lines: bool) -> tuple[subprocess.Popen[bytes], str]:
    """`factledger serve` on the embedded default, its `register_subject` exploding."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(support.__file__).parent.parent), *sys.path]),
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_LOG_JSON": "true" if json_lines else "false",
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": TEST_AUTH.issuer,
        "FACTLEDGER_AUTH__AUDIENCE": TEST_AUTH.audience,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "test", "secret": TEST_SECRET}]),
    }
    entry = (
        "from support.canaries import arm_register_fault; arm_register_fault(); "
        "from factledger.api.cli.main import main; main()"
    )
    command = [sys.executable, "-c", entry, "serve", "--port", str(port)]
    with (data_dir / "serve.log").open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            command, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    return process, f"http://127.0.0.1:{port}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_ready(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, "factledger serve exited"
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError("factledger serve did not become ready")


@pytest.mark.parametrize("json_lines", [False, True], ids=["console", "json"])
def test_a_real_server_logs_a_500_without_content(tmp_path: Path, json_lines: bool) -> None:
    process, base_url = serve_with_a_fault(tmp_path, json_lines=json_lines)
    try:
        wait_until_ready(base_url, process)
        body = {"kind": "lead", "external_ref": CANARY_BODY}
        # The first request after ready waits for the routes' load (ADR 0095): seconds on a
        # loaded machine.
        response = httpx.post(f"{base_url}/v1/subjects", json=body, headers=SERVICE, timeout=60)
        assert response.status_code == 500
    finally:
        process.terminate()
        process.wait(timeout=20)
    logs = (tmp_path / "serve.log").read_text()
    assert "api.unexpected_error" in logs
    assert "RuntimeError" in logs
    assert hits(logs) == [], logs[-3000:]
