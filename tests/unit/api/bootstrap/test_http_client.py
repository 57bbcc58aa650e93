"""The runtime opens its outbound HTTP client only for an adapter that calls out: the
self-hosted defaults never send a request, and opening a client reads the CA bundle."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.api.bootstrap import http_client
from factledger.api.bootstrap.backend import build_embedder, open_backend
from factledger.api.bootstrap.http_client import ClientOnDemand
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import load_settings
from factledger.testing.manual_clock import ManualClock


class CountedClient(httpx.AsyncClient):
    opened = 0

    def __init__(self) -> None:
        super().__init__()
        CountedClient.opened += 1


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountedClient]:
    CountedClient.opened = 0
    monkeypatch.setattr(http_client.httpx, "AsyncClient", CountedClient)
    return CountedClient


async def test_a_client_on_demand_opens_once_at_its_first_use_and_closes_with_the_stack(
    counted: type[CountedClient],
) -> None:
    async with AsyncExitStack() as stack:
        on_demand = ClientOnDemand(stack)
        assert counted.opened == 0
        first = on_demand()
        assert on_demand() is first
        assert counted.opened == 1
    assert first.is_closed


async def test_the_default_self_hosted_backend_opens_no_http_client(
    tmp_path: Path, counted: type[CountedClient]
) -> None:
    settings = load_settings(data_dir=tmp_path)
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))  # never started here
        await open_backend(settings, HashingEmbedder(64), ManualClock(), postgres, stack)
    assert counted.opened == 0


async def test_the_http_embedder_opens_the_client_it_calls_through(
    tmp_path: Path, counted: type[CountedClient]
) -> None:
    embedder = {
        "kind": "openai_compatible",
        "base_url": "http://embed.test/v1",
        "model": "e",
        "dimension": 32,
        "api_key": "k-1",
    }
    settings = load_settings(data_dir=tmp_path, embedder=embedder)
    async with AsyncExitStack() as stack:
        build_embedder(settings.embedder, ClientOnDemand(stack))
        assert counted.opened == 1
