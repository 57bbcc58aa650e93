"""Fuzzing the whole API from its own OpenAPI schema: whatever schemathesis sends, nothing
answers 5xx. Bounded (a handful of examples per operation) so it stays a fast test.

The app runs in-process under uvicorn on loopback, with every part configured (recall,
sessions, sync store), so no route can hide behind a 503."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, Phase, settings
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

EXAMPLES_PER_OPERATION = 8
# The agent token reaches deepest (its subject exists, `me` resolves); role refusals of the
# other routes are covered by the identity tests.
AGENT = bearer(token(Role.AGENT, kind="lead", ref="fuzz-1"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# One app for the schema and the server; its ports are only ever used on the server's loop.
APP = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
schema = schemathesis.openapi.from_dict(APP.openapi())


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
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
    url = f"http://127.0.0.1:{port}"
    httpx.post(
        f"{url}/v1/subjects",
        json={"kind": "lead", "external_ref": "fuzz-1"},
        headers=bearer(token(Role.SERVICE)),
    ).raise_for_status()
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_the_api_fail(case: Any, live_url: str) -> None:
    response = case.call(base_url=live_url, headers=AGENT)
    assert response.status_code < 500, (case.method, case.path, response.text[:300])
    if response.status_code >= 400:
        # One error shape for the whole API.
        body = response.json()
        assert {"error", "detail"} <= set(body) <= {"error", "detail", "field"}, body
