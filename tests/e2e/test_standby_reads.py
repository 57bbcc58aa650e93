"""Reads on a hot standby with read-your-writes: the API's writes go to the primary (through
the multi-host URL), recall and the views read the standby, and a caller that sends back the
`Factledger-Position` of its last write never reads a standby older than that write (the API
waits a moment for the standby's replay, then reads the primary).

The standby's replay is paused (`pg_wal_replay_pause()`) to make it lag on purpose."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, line, token
from support.serve_process import gauge

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.testing.replication import ReplicatedPostgres, replicated_postgres

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-standby"))
POSITION = "Factledger-Position"


@dataclass
class Standby:
    cluster: ReplicatedPostgres
    runtime: Runtime
    http: httpx.AsyncClient

    def replay(self, *, paused: bool) -> None:
        pause = "pg_wal_replay_pause()" if paused else "pg_wal_replay_resume()"
        self.cluster.standby.execute(f"SELECT {pause}")

    async def routes(self) -> tuple[float, float]:
        """Reads served by the standby and kept on the primary so far."""
        text = (await self.http.get("/metrics")).text
        return (
            _counter(text, 'factledger_read_routes_total{route="standby"}'),
            _counter(text, 'factledger_read_routes_total{route="primary"}'),
        )


def _counter(text: str, name: str) -> float:
    try:
        return gauge(text, name)
    except AssertionError:
        return 0.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[ReplicatedPostgres]:
    with replicated_postgres(synchronous=False) as pair:
        yield pair


@pytest.fixture
async def standby(cluster: ReplicatedPostgres, tmp_path: Path) -> AsyncIterator[Standby]:
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(cluster.url()),
        database_read_url=SecretStr(cluster.standby_url()),
        event_store={"kind": "postgres", "schema_name": "reads_events"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": "reads_views"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": "reads_short"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": "reads_sync"}},  # type: ignore[arg-type]
        backend={"kind": "pgvector", "schema_name": "reads_memory"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        postgres={"read_your_writes_wait_s": 0.3},  # type: ignore[arg-type]
        # What is tested is where a read goes, not how fast: a loaded machine must not turn
        # a recall into a degraded answer before it starts.
        recall={"recall_budget_s": 10.0},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(open_runtime(settings))
        app = create_app(settings, ports=runtime)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")
        stack.push_async_callback(http.aclose)
        try:
            yield Standby(cluster, runtime, http)
        finally:
            cluster.standby.execute("SELECT pg_wal_replay_resume()")


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def tell(standby: Standby, session: str, text: str) -> str:
    """One session in which the subject says `text`, synced to pgvector; returns the position
    of the session's end (the sync's writes come after it: see `synced_position`)."""
    http = standby.http
    start = {"session_id": session, "channel": "voice"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    said = {"role": "subject", "text": text}
    await ok(await http.post(**line(f"/v1/subjects/me/sessions/{session}/messages", said, AGENT)))
    ended = await http.post(f"/v1/subjects/me/sessions/{session}/end", json={}, headers=AGENT)
    await ok(ended)
    worker = standby.runtime.sync_worker
    assert worker is not None
    while (await worker.run_once()).fed:
        pass
    return ended.headers[POSITION]


async def synced_position(standby: Standby) -> str:
    """A position past the sync's writes: that of a write the caller makes after it (the
    registration is idempotent, and its answer carries the primary's position)."""
    body = {"kind": "lead", "external_ref": "crm-standby"}
    registered = await standby.http.post("/v1/subjects", json=body, headers=SERVICE)
    assert registered.is_success, registered.text
    return registered.headers[POSITION]


async def recall(standby: Standby, position: str | None) -> str:
    headers = dict(AGENT) if position is None else {**AGENT, POSITION: position}
    answer = await standby.http.post(
        "/v1/subjects/me/recall", json={"query": "which supplier"}, headers=headers
    )
    await ok(answer)
    return answer.text


async def test_recall_reads_the_standby_and_never_older_than_the_callers_write(
    standby: Standby,
) -> None:
    await synced_position(standby)
    await tell(standby, "s-1", "We work with Supplier Amber.")
    caught_up = await synced_position(standby)
    assert "Amber" in await recall(standby, caught_up)

    standby.replay(paused=True)
    await tell(standby, "s-2", "We moved to Supplier Beryl in March.")
    after_sync = await synced_position(standby)
    served, kept = await standby.routes()

    # Without a position the standby serves: it has not replayed Beryl.
    assert "Beryl" not in await recall(standby, None)
    # With the caller's position the paused standby is too old: the primary answers.
    assert "Beryl" in await recall(standby, after_sync)
    assert await standby.routes() == (served + 1, kept + 1)

    standby.replay(paused=False)
    # Replayed: the standby serves the caller's read, and it holds the write.
    assert "Beryl" in await recall(standby, after_sync)
    assert (await standby.routes())[0] == served + 2


async def test_views_on_the_standby_never_older_than_the_callers_write(
    standby: Standby,
) -> None:
    standby.replay(paused=True)
    body = {"kind": "lead", "external_ref": "crm-views"}
    registered = await standby.http.post("/v1/subjects", json=body, headers=SERVICE)
    subject = await ok(registered, 201)
    served, kept = await standby.routes()
    # The standby has not replayed the registration, nor the views written for it; with the
    # caller's position the primary answers.
    url = f"/v1/subjects/{subject['subject_id']}/profile"
    headers = {**SERVICE, POSITION: registered.headers[POSITION]}
    profile = await ok(await standby.http.get(url, headers=headers))
    assert profile["version"] == 0
    assert await standby.routes() == (served, kept + 1)
    # Without it the standby is chosen, and its views, behind the primary's, are passed over.
    assert (await ok(await standby.http.get(url, headers=SERVICE)))["version"] == 0
    assert (await standby.routes())[0] == served + 1


async def test_a_position_that_is_not_one_is_refused_naming_the_header(standby: Standby) -> None:
    answer = await standby.http.get(
        "/v1/subjects/me/profile", headers={**AGENT, POSITION: "yesterday"}
    )
    assert answer.status_code == 422
    assert answer.json()["field"] == "factledger-position"


def test_the_standby_is_read_only(cluster: ReplicatedPostgres) -> None:
    """What the routing rests on: the standby refuses writes, so only reads can go there."""
    with (
        psycopg.connect(cluster.standby.location.conninfo, autocommit=True) as conn,
        pytest.raises(psycopg.errors.ReadOnlySqlTransaction),
    ):
        conn.execute("CREATE TABLE nothing_here (x int)")
