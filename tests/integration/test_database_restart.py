"""PostgreSQL killed with SIGKILL under load, then restarted on the same data: two API
runtimes and a sync worker heal by themselves (ADR 0013).

One process hosts both API runtimes (each its own pools, as two API processes would have) and
a worker runtime, all on a PostgreSQL server of the test's own. Writers propose changes through
the HTTP API, retrying a failed request with its `Idempotency-Key` as a client would. Then:

- while the database is down, every answer is a 503 (never a 500) within the pool's wait (or a
  409 for a key whose failed attempt could not release it until its lease lapses),
  `/readyz` is 503 naming the stores and `/healthz` stays 200;
- within 10 s of the database being back, every writer, both APIs' reads and the worker
  succeed again, without reopening anything;
- every acknowledged proposal is in the ledger exactly once, and the live views equal a
  rebuild from the log.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, token
from support.crash import CrashablePostgres

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import WORKER, Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.domain.events import ChangeProposed
from factledger.projections.follower import Follower, max_position, read_events
from factledger.projections.profile.projection import ProfileProjection

pytestmark = [pytest.mark.integration, pytest.mark.serial]

WRITERS = 4
ACQUIRE_TIMEOUT_S = 1.5
# A request while the database is down waits once for a connection (plus a connection
# attempt and a loaded machine's scheduling); before the pools were bounded it took 29-200 s.
ANSWER_WITHIN_S = ACQUIRE_TIMEOUT_S + 3.5
HEAL_WITHIN_S = 10.0
DOWN_FOR_S = 2.0
WARM_UP_WITHIN_S = 30.0
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER))


@dataclass
class Writer:
    index: int
    api: httpx.AsyncClient
    agent: dict[str, str]
    acknowledged: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    slowest_failure_s: float = 0.0
    last_success: float = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        """Proposes one field after another; a failed proposal is retried with its key."""
        number = 0
        while not stop.is_set():
            body = {
                "field": f"note_{number}",
                "value": {"type": "text", "value": f"value {number}"},
                "origin": "inferred",
            }
            headers = {**self.agent, "Idempotency-Key": f"writer-{self.index}-{number:06d}"}
            started = time.monotonic()
            try:
                response = await self.api.post(
                    "/v1/subjects/me/proposals", json=body, headers=headers
                )
            except httpx.HTTPError:  # pragma: no cover - ASGI transport: no network to fail
                self.statuses[0] += 1
                continue
            self.statuses[response.status_code] += 1
            if response.status_code == 201:
                self.acknowledged.append(response.json()["change_id"])
                self.last_success = time.monotonic()
                number += 1
            else:
                self.slowest_failure_s = max(self.slowest_failure_s, time.monotonic() - started)
                await asyncio.sleep(0.2)


@dataclass
class Deployment:
    apis: list[httpx.AsyncClient]
    runtimes: list[Runtime]
    worker: Runtime


@pytest.fixture
async def deployment(tmp_path: Path) -> AsyncIterator[tuple[CrashablePostgres, Deployment]]:
    # Beside the session server's, not under `tmp_path`: as root the server runs as its own
    # user, which cannot enter pytest's private temporary folders.
    server = CrashablePostgres(Path(tempfile.mkdtemp(prefix="factledger-crash-")))
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(server.url()),
        event_store={"kind": "postgres", "schema_name": "events"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": "views"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": "short_term"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": "sync"}, "poll_interval_s": 0.2},  # type: ignore[arg-type]
        backend={"kind": "pgvector"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        postgres={  # type: ignore[arg-type]
            "connect_timeout_s": 2,
            "acquire_timeout_s": ACQUIRE_TIMEOUT_S,
            "reconnect_timeout_s": 2.0,
        },
        # A request whose command failed releases its key; when the release fails too (the
        # database is down), the key frees when its lease lapses: short here, so the writer's
        # retry of that key goes through soon after the database is back.
        # The writers share one agent principal per API and write as fast as it answers: on a
        # fast machine they outrun its token bucket, whose 429s are not what this test is about.
        api={"idempotency_lease_s": 2.0, "rate_limit": {"enabled": False}},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    try:
        async with AsyncExitStack() as stack:
            runtimes, apis = [], []
            for name in ("a", "b"):
                runtime = await stack.enter_async_context(open_runtime(settings))
                transport = httpx.ASGITransport(app=create_app(settings, ports=runtime))
                api = httpx.AsyncClient(transport=transport, base_url=f"http://api-{name}")
                stack.push_async_callback(api.aclose)
                runtimes.append(runtime)
                apis.append(api)
            worker = await stack.enter_async_context(open_runtime(settings, WORKER))
            yield server, Deployment(apis, runtimes, worker)
    finally:
        server.stop()


async def register(api: httpx.AsyncClient, ref: str) -> dict[str, str]:
    response = await api.post(
        "/v1/subjects", json={"kind": "lead", "external_ref": ref}, headers=SERVICE
    )
    assert response.status_code == 201, response.text
    return bearer(token(Role.AGENT, kind="lead", ref=ref))


async def sync_lag(worker: Runtime) -> int:
    store = worker.sync_store
    assert store is not None
    top = await asyncio.to_thread(max_position, worker.ledger)
    return max(0, top - await store.position()) + await store.pending_count()


async def until(deadline: float, check: object, what: str) -> float:
    """Polls the async `check` until it returns True; the time it did, or fails the test."""
    assert callable(check)
    while True:
        try:
            if await check():
                return time.monotonic()
        except Exception:  # noqa: S110 - a store still away: poll again
            pass
        assert time.monotonic() < deadline, f"{what} did not heal within {HEAL_WITHIN_S} s"
        await asyncio.sleep(0.1)


async def test_apis_and_worker_heal_after_postgres_is_killed(
    deployment: tuple[CrashablePostgres, Deployment],
) -> None:
    server, d = deployment
    writers = [
        Writer(i, d.apis[i % 2], await register(d.apis[i % 2], f"crm-{i}")) for i in range(WRITERS)
    ]
    assert d.worker.sync_worker is not None
    stop_worker, stop_load = asyncio.Event(), asyncio.Event()
    worker_task = asyncio.create_task(d.worker.sync_worker.run_forever(stop_worker))
    load = [asyncio.create_task(w.run(stop_load)) for w in writers]
    try:
        # Load before the crash: every writer acknowledged at least twice. A wait on that, not a
        # fixed sleep: a slow machine's first proposals (pools, model loads) took 1.7 s.
        warm = time.monotonic() + WARM_UP_WITHIN_S
        while not all(len(w.acknowledged) >= 2 for w in writers):
            assert time.monotonic() < warm, "no load before the crash"
            await asyncio.sleep(0.1)

        # When: the database dies under load
        await asyncio.to_thread(server.kill)
        await asyncio.sleep(0.3)
        # Then: answers are quick 503s; readiness names the stores, liveness stays up
        for api in d.apis:
            started = time.monotonic()
            ready = await api.get("/readyz")
            assert ready.status_code == 503
            assert {"ledger", "views"} <= set(ready.json()["failing"])
            assert time.monotonic() - started < ANSWER_WITHIN_S
            assert (await api.get("/healthz")).status_code == 200
            read = await api.get("/v1/subjects/me/profile", headers=writers[0].agent)
            assert read.status_code == 503
            assert read.headers["Retry-After"]
        await asyncio.sleep(DOWN_FOR_S)

        # When: it comes back on the same data
        await asyncio.to_thread(server.restart)
        back = time.monotonic()
        deadline = back + HEAL_WITHIN_S

        # Then: every writer, every API's reads and readiness, and the worker heal
        writers_healed = back
        for w in writers:
            await until(deadline, _succeeded_after(w, back), f"writer {w.index}")
            writers_healed = max(writers_healed, w.last_success)
        for index, api in enumerate(d.apis):
            await until(deadline, _ok(api, "/readyz", {}), f"readiness of api {index}")
            await until(
                deadline,
                _ok(api, "/v1/subjects/me/profile", writers[0].agent),
                f"reads of api {index}",
            )
        stop_load.set()
        await asyncio.gather(*load)
        healed = await until(deadline, _no_lag(d.worker), "the sync worker")
        print(  # noqa: T201 - the figures ADR 0013 quotes
            f"\nafter the restart: every writer served within {writers_healed - back:.2f} s,"
            f" the sync caught up within {healed - back:.2f} s"
        )
    finally:
        stop_load.set()
        stop_worker.set()
        await asyncio.gather(*load, worker_task, return_exceptions=True)

    statuses = sum((w.statuses for w in writers), Counter[int]())
    assert set(statuses) <= {201, 409, 503}, statuses
    assert statuses[503] > 0, "the crash went unnoticed"
    assert max(w.slowest_failure_s for w in writers) < ANSWER_WITHIN_S

    # Nothing acknowledged lost or doubled; views equal a rebuild.
    live = d.runtimes[0]
    live.catch_up()
    proposed = _proposed_change_ids(live)
    acknowledged = [change for w in writers for change in w.acknowledged]
    assert len(acknowledged) == len(set(acknowledged))
    assert set(acknowledged) <= set(proposed)
    assert len(proposed) == len(set(proposed)), "a proposal was recorded twice"
    rebuilt = ProfileProjection(InMemoryViewStore("profile"))
    Follower(live.ledger, [rebuilt]).catch_up()
    assert rebuilt.dump() == live.projection.dump()


def _succeeded_after(writer: Writer, moment: float) -> object:
    async def check() -> bool:
        return writer.last_success > moment

    return check


def _ok(api: httpx.AsyncClient, path: str, headers: dict[str, str]) -> object:
    async def check() -> bool:
        return (await api.get(path, headers=headers)).status_code == 200

    return check


def _no_lag(worker: Runtime) -> object:
    async def check() -> bool:
        return await sync_lag(worker) == 0

    return check


def _proposed_change_ids(runtime: Runtime) -> list[str]:
    ids: list[str] = []
    position = 0
    while page := read_events(runtime.ledger, after=position):
        ids.extend(
            str(tracked.event.change_id)
            for tracked in page
            if isinstance(tracked.event, ChangeProposed)
        )
        position = page[-1].position
    return ids
