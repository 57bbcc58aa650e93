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
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, Phase, settings
from support.api_fuzz import CALLERS, Scene, check_case, read_every_event_page, set_the_scene
from support.api_harness import TEST_AUTH, build_ports

from factledger.api.http.app import create_app
from factledger.api.settings import RateLimitSettings
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = int(os.environ.get("FACTLEDGER_FUZZ_EXAMPLES", "5"))


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
    check_case(case, caller, live)


def test_the_analyst_reads_the_fuzzed_subjects_history_in_pages_of_500(live: Scene) -> None:
    assert read_every_event_page(live.url, live.subject_id) >= 1
