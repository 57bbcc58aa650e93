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
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = int(os.environ.get("FACTLEDGER_FUZZ_EXAMPLES", "8"))
CALLERS = {
    "agent": bearer(token(Role.AGENT, kind="lead", ref="fuzz-1")),
    "service": bearer(token(Role.SERVICE)),
}
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
APP = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
schema = schemathesis.openapi.from_dict(APP.openapi())


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, str]]:
    """The server's URL and the id of the subject the agent token is bound to."""
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
    created = httpx.post(
        f"{url}/v1/subjects",
        json={"kind": "lead", "external_ref": "fuzz-1"},
        headers=CALLERS["service"],
    )
    created.raise_for_status()
    try:
        yield url, str(created.json()["subject_id"])
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# Every other case addresses the subject that exists (random ids only ever reach a 404).
_TURN = itertools.count()


def aim_at_the_subject(case: Any, caller: str, subject_id: str) -> None:
    parameters = case.path_parameters or {}
    if "subject" in parameters and next(_TURN) % 2 == 0:
        parameters["subject"] = "me" if caller == "agent" else subject_id


@pytest.mark.parametrize("caller", sorted(CALLERS))
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_the_api_fail_or_break_its_schema(
    case: Any, caller: str, live: tuple[str, str]
) -> None:
    url, subject_id = live
    aim_at_the_subject(case, caller, subject_id)
    response = case.call(base_url=url, headers=CALLERS[caller])
    case.validate_response(response, checks=CHECKS, headers=CALLERS[caller])
    if response.status_code >= 400:
        # One error shape for the whole API.
        body = response.json()
        assert {"error", "detail"} <= set(body) <= {"error", "detail", "field"}, body
