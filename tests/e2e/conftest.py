"""Fixtures of the HTTP tests: in-memory ports on a manual clock and a client of the app.

A module that needs another start time defines its own `clock`; one that needs other ports or
another app, its own `ports` or `http`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, build_ports

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.testing.manual_clock import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def ports(clock: ManualClock) -> Runtime:
    return build_ports(clock)


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        yield client
