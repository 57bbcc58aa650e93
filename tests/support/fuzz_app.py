"""The app the embedded-default schema fuzzing aims at (tests/e2e/test_api_fuzz.py): the
embedded default in memory with every part configured (recall, sessions, sync store), so no
route can hide behind a 503, and rate limits off, since every case comes from one address and
once its failed authentications ran out, the limiter would answer most of the run with 429s
(the limits have their own tests, tests/e2e/test_api_rate_limits.py).

Served by `uvicorn --factory support.fuzz_app:app` in a process of its own, and built in the
test's process only for its schema (`create_app` starts no thread)."""

from __future__ import annotations

from fastapi import FastAPI
from support.api_harness import TEST_AUTH, build_ports

from factledger.api.http.app import create_app
from factledger.api.settings import RateLimitSettings
from factledger.testing.manual_clock import ManualClock


def app() -> FastAPI:
    return create_app(
        ports=build_ports(ManualClock()),
        auth=TEST_AUTH,
        rate_limit=RateLimitSettings(enabled=False),
    )
