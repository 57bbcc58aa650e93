"""Reads on a hot standby with read-your-writes: the API's writes go to the primary (through
the multi-host URL), recall and the views read the standby, and a caller that sends back the
`Factledger-Position` of its last write never reads a standby older than that write (the API
waits a moment for the standby's replay, then reads the primary).

The ledger's history reads the standby the same way: a subject's events, and the event
stream, which neither skips nor repeats an event when it changes server (by reconnecting, or
because its standby stopped).

The standby's replay is paused (`pg_wal_replay_pause()`) to make it lag on purpose."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import uvicorn
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, line, token
from support.serve_process import free_port, gauge

from factledger.adapters.postgres.standby_ledger import RoutedReads
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import (
    ApiSettings,
    EventStreamSettings,
    RateLimitSettings,
    Settings,
)
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
    settings: Settings

    def replay(self, *, paused: bool) -> None:
        pause = "pg_wal_replay_pause()" if paused else "pg_wal_replay_resume()"
        self.cluster.standby.execute(f"SELECT {pause}")

    async def routes(self, http: httpx.AsyncClient | None = None) -> tuple[float, float]:
        """Reads served by the standby and kept on the primary so far (by this fixture's app,
        or the one `http` talks to)."""
        text = (await (http or self.http).get("/metrics")).text
        return (
            _counter(text, 'factledger_read_routes_total{route="standby"}'),
            _counter(text, 'factledger_read_routes_total{route="primary"}'),
        )


def replayed(cluster: ReplicatedPostgres, position: str) -> None:
    """Waits (with a deadline) until the standby has replayed up to `position`."""
    deadline = time.monotonic() + 10.0
    with psycopg.connect(cluster.standby.location.conninfo, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [position])
            if (found := row.fetchone()) is not None and found[0]:
                return
            assert time.monotonic() < deadline, "the standby did not replay in time"
            time.sleep(0.01)


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
            yield Standby(cluster, runtime, http, settings)
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
    # The app waits only `read_your_writes_wait_s` for the standby: the test waits for it to
    # replay, so that a loaded machine's slow replay does not send the read to the primary.
    replayed(standby.cluster, after_sync)
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


# -- the ledger's history and the event stream ------------------------------------------------

ANALYST = bearer(token(Role.ANALYST))
HISTORY_AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-history"))
STREAM_TENANT = "t-stream"
STREAM_SERVICE = bearer(token(Role.SERVICE, tenant=STREAM_TENANT))
STREAM_ANALYST = bearer(token(Role.ANALYST, tenant=STREAM_TENANT))
WAIT_S = 10.0


def history_log(standby: Standby) -> RoutedReads:
    routed = standby.runtime.ledger.history_log
    assert isinstance(routed, RoutedReads)
    return routed


async def topics(standby: Standby, subject: str, position: str | None) -> list[str]:
    headers = ANALYST if position is None else {**ANALYST, POSITION: position}
    page = await ok(await standby.http.get(f"/v1/subjects/{subject}/events", headers=headers))
    return [e["topic"] for e in page["events"]]


async def test_a_subjects_events_read_the_standby_and_never_older_than_the_callers_write(
    standby: Standby,
) -> None:
    body = {"kind": "lead", "external_ref": "crm-history"}
    registered = await standby.http.post("/v1/subjects", json=body, headers=SERVICE)
    subject = (await ok(registered, 201))["subject_id"]
    replayed(standby.cluster, registered.headers[POSITION])
    served, _ = await standby.routes()
    assert await topics(standby, subject, registered.headers[POSITION]) == [
        "factledger.subject.registered.v1"
    ]
    assert (await standby.routes())[0] == served + 1

    standby.replay(paused=True)
    http = standby.http
    start = {"session_id": "h-1", "channel": "voice"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=HISTORY_AGENT), 201)
    ended = await http.post("/v1/subjects/me/sessions/h-1/end", json={}, headers=HISTORY_AGENT)
    await ok(ended)
    recorded = "factledger.subject.session_recorded.v1"
    served, kept = await standby.routes()

    # Without a position the standby answers from its ledger, which has not replayed the
    # session: the read really went there.
    assert recorded not in await topics(standby, subject, None)
    assert not history_log(standby).standby_resting()
    # With the caller's position the primary answers, and the session is there.
    assert recorded in await topics(standby, subject, ended.headers[POSITION])
    assert await standby.routes() == (served + 1, kept + 1)

    standby.replay(paused=False)
    replayed(standby.cluster, ended.headers[POSITION])  # as above: not raced against the wait
    # Replayed: the standby serves the caller's read, and holds the session.
    assert recorded in await topics(standby, subject, ended.headers[POSITION])
    assert (await standby.routes())[0] == served + 2


@asynccontextmanager
async def served(standby: Standby) -> AsyncIterator[str]:
    """The standby fixture's app on a real server on loopback (an ASGI transport buffers a
    whole response, and a stream never ends by itself)."""
    api = ApiSettings(
        event_stream=EventStreamSettings(heartbeat_s=0.2, poll_s=0.05, batch=2),
        rate_limit=RateLimitSettings(enabled=False),
    )
    settings = standby.settings.model_copy(update={"api": api})
    app = create_app(settings, ports=standby.runtime)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=free_port(), log_config=None, access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT_S)


async def stream_register(
    api: str, ref: str, service: dict[str, str] = STREAM_SERVICE
) -> tuple[str, str]:
    """Registers a subject of the stream's tenant; its id and the write's position."""
    async with httpx.AsyncClient(base_url=api, headers=service) as http:
        created = await http.post("/v1/subjects", json={"kind": "lead", "external_ref": ref})
        assert created.status_code == 201, created.text
        return str(created.json()["subject_id"]), created.headers[POSITION]


async def events_of(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """Each SSE event's (id, subject) as it arrives."""
    cursor = ""
    async for text in response.aiter_lines():
        if text.startswith("id:"):
            cursor = text.removeprefix("id:").strip()
        elif text.startswith("data:"):
            yield cursor, json.loads(text.removeprefix("data:"))["subject_id"]


async def take(
    events: AsyncIterator[tuple[str, str]], count: int, wait_s: float = WAIT_S
) -> list[tuple[str, str]]:
    got: list[tuple[str, str]] = []
    async with asyncio.timeout(wait_s):
        async for event in events:
            got.append(event)
            if len(got) == count:
                break
    return got


async def test_the_event_stream_reads_the_standby_and_neither_skips_nor_repeats_across_servers(
    standby: Standby,
) -> None:
    async with served(standby) as api, httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
        first, _ = await stream_register(api, "s-1")
        second, position = await stream_register(api, "s-2")
        replayed(standby.cluster, position)  # both, before the standby's replay stops
        standby.replay(paused=True)
        third, _ = await stream_register(api, "s-3")
        served_before, kept_before = await standby.routes(http)

        # No position: the standby serves the stream, which has only what it replayed; once
        # replay resumes the same stream goes on with the third, nothing skipped or repeated.
        async with http.stream("GET", "/v1/events/stream", headers=STREAM_ANALYST) as response:
            assert response.status_code == 200
            events = events_of(response)
            got = await take(events, 2)
            assert [s for _, s in got] == [first, second]
            assert (await standby.routes(http))[0] == served_before + 1
            standby.replay(paused=False)
            got += await take(events, 1)
            assert [s for _, s in got] == [first, second, third]
            assert not history_log(standby).standby_resting()  # no fall back to the primary

        # Resuming from the first's cursor with the position of a write the paused standby
        # has not replayed: the primary serves it, from exactly the next event.
        standby.replay(paused=True)
        fourth, newest = await stream_register(api, "s-4")
        resume = {**STREAM_ANALYST, "Last-Event-ID": got[0][0], POSITION: newest}
        async with http.stream("GET", "/v1/events/stream", headers=resume) as response:
            assert response.status_code == 200
            again = await take(events_of(response), 3)
        assert [s for _, s in again] == [second, third, fourth]
        assert [c for c, _ in again[:2]] == [c for c, _ in got[1:]]
        assert (await standby.routes(http))[1] == kept_before + 1
        standby.replay(paused=False)


GONE_SERVICE = bearer(token(Role.SERVICE, tenant="t-gone"))
GONE_ANALYST = bearer(token(Role.ANALYST, tenant="t-gone"))


async def test_a_stream_on_a_standby_that_stops_goes_on_from_the_primary_without_a_gap(
    standby: Standby,
) -> None:
    async with served(standby) as api, httpx.AsyncClient(base_url=api, timeout=WAIT_S) as http:
        first, _ = await stream_register(api, "gone-1", GONE_SERVICE)
        second, position = await stream_register(api, "gone-2", GONE_SERVICE)
        replayed(standby.cluster, position)
        async with http.stream(
            "GET", "/v1/events/stream", headers=GONE_ANALYST, timeout=3 * WAIT_S
        ) as response:
            assert response.status_code == 200
            events = events_of(response)
            got = await take(events, 2)
            await asyncio.to_thread(standby.cluster.standby.stop)
            try:
                # Only the primary can have this one: the stream went on there.
                third, _ = await stream_register(api, "gone-3", GONE_SERVICE)
                got += await take(events, 1, wait_s=3 * WAIT_S)
            finally:
                await asyncio.to_thread(standby.cluster.standby.start)
                await asyncio.to_thread(standby.cluster.wait_streaming)
            fourth, position = await stream_register(api, "gone-4", GONE_SERVICE)
            replayed(standby.cluster, position)
            got += await take(events, 1, wait_s=3 * WAIT_S)
        assert [s for _, s in got] == [first, second, third, fourth]
        assert len({c for c, _ in got}) == len(got)  # none repeated
