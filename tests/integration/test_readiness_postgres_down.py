"""`/readyz` answers within a second while PostgreSQL is stalled (SIGSTOP) or down (SIGKILL),
with a 503 naming every store that lives there; `/healthz` stays 200 and cheap."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH
from support.crash import CrashablePostgres

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.serial]

ANSWER_WITHIN_S = 1.0
POSTGRES_STORES = {"ledger", "views", "keys", "short_term", "sync_store"}
HEAL_WITHIN_S = 20.0


@pytest.fixture
async def api(crashable: CrashablePostgres, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(crashable.url()),
        event_store={"kind": "postgres", "schema_name": "events"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": "views"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": "short_term"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": "sync"}},  # type: ignore[arg-type]
        backend={"kind": "pgvector"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        postgres={"connect_timeout_s": 2, "acquire_timeout_s": 3, "reconnect_timeout_s": 2},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with open_runtime(settings) as runtime:
        transport = httpx.ASGITransport(app=create_app(settings, ports=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def timed(api: httpx.AsyncClient, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await api.get(path)
    return response, time.monotonic() - started


async def healed(api: httpx.AsyncClient) -> None:
    deadline = time.monotonic() + HEAL_WITHIN_S
    while (await api.get("/readyz")).status_code != 200:
        assert time.monotonic() < deadline, "readiness did not come back"
        await asyncio.sleep(0.2)


async def test_readiness_answers_within_a_second_while_postgres_is_stalled_or_down(
    crashable: CrashablePostgres, api: httpx.AsyncClient
) -> None:
    ready, _ = await timed(api, "/readyz")
    assert ready.status_code == 200, ready.text
    assert set(ready.json()["checks"]) >= POSTGRES_STORES | {"memory"}

    # Not in a worker thread: the stalled server holds some of those until it resumes.
    crashable.freeze()
    try:
        for _ in range(5):  # probes in a row: none waits behind the last one's checks
            stalled, took = await timed(api, "/readyz")
            assert stalled.status_code == 503
            assert set(stalled.json()["failing"]) == POSTGRES_STORES
            assert stalled.json()["checks"]["memory"] == "degraded"
            assert took < ANSWER_WITHIN_S
            live, _ = await timed(api, "/healthz")
            assert live.status_code == 200
    finally:
        crashable.thaw()
    await healed(api)

    await asyncio.to_thread(crashable.kill)
    for _ in range(3):
        down, took = await timed(api, "/readyz")
        assert down.status_code == 503
        assert set(down.json()["failing"]) == POSTGRES_STORES
        assert down.headers["Retry-After"]
        assert took < ANSWER_WITHIN_S
    await asyncio.to_thread(crashable.restart)
    await healed(api)
