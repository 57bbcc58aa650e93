"""Canary words written through the HTTP API of a real server, for the tests that look for
forgotten words in every read path (event pages, the stream, webhooks, replay, the store)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from support.api_harness import TEST_AUTH, bearer, line, token
from support.serve_process import free_port

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.console.app import create_app as create_console_app
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import (
    ApiSettings,
    EventStreamSettings,
    RateLimitSettings,
    Settings,
    load_settings,
)
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.ledger.event_views import event_body
from factledger.application.memory.record_ids import namespace_for
from factledger.domain.events import SessionRecorded
from factledger.testing.manual_clock import ManualClock

STATED = "Zanzibar Periwinkle"  # the words of a field that is then forgotten
KEPT = "Walrus Lantern"  # the subject's other words, which stay
ERASED_WORDS = "Quixotic Marzipan"
ERASED_REF = "crm-Ottoline-Fairweather"  # a reference that identifies a person
ERASE_REASON = "Letter from Ottoline Fairweather"
SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
ANALYST = bearer(token(Role.ANALYST))
STREAM = "/v1/events/stream"
WAIT_S = 10.0
# A bound on one request, not a measure: an import runs the extractor, which takes seconds on a
# two-core machine that other work loads.
REQUEST_S = 30.0


def said_for(how: str, ref_prefix: str) -> tuple[list[str], str, list[str]]:
    """What a subject said before a forget of `how` (a field, a memory, an erasure), its
    reference, and the words the forget must take (the erased reference among them)."""
    return {
        "field": (
            [f"Our budget is {STATED} a year.", f"We buy from {KEPT} now."],
            f"{ref_prefix}f",
            [STATED],
        ),
        "memory": (
            [f"We buy from {KEPT} now.", f"Our team meets on {STATED} Island."],
            f"{ref_prefix}m",
            [STATED],
        ),
        "erasure": ([f"We pay {ERASED_WORDS} a month."], ERASED_REF, [ERASED_REF, ERASED_WORDS]),
    }[how]


def agent(ref: str) -> dict[str, str]:
    return bearer(token(Role.AGENT, kind="lead", ref=ref))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.integration)]


def backend_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The embedded default (SQLite files) or PostgreSQL + pgvector in fresh schemas."""
    if request.param == "sqlite":
        return load_settings(data_dir=tmp_path, embedder={"kind": "hashing"})
    location: PostgresLocation = request.getfixturevalue("postgres")
    suffix = uuid.uuid4().hex[:10]
    return load_settings(
        data_dir=tmp_path,
        database_url=(
            f"postgresql://{location.user}:@:{location.port}/{location.dbname}?host={location.host}"
        ),
        event_store={"kind": "postgres", "schema_name": f"words_events_{suffix}"},
        views={"kind": "postgres", "schema_name": f"words_views_{suffix}"},
        short_term={"kind": "postgres", "schema_name": f"words_stm_{suffix}"},
        sync={"store": {"kind": "postgres", "schema_name": f"words_sync_{suffix}"}},
        backend={"kind": "pgvector", "schema_name": f"words_memory_{suffix}"},
        embedder={"kind": "hashing"},
    )


@asynccontextmanager
async def serving(
    settings: Settings, *, console: bool = False
) -> AsyncIterator[tuple[str, Runtime]]:
    """The API (with the reviewer console at `/console` when `console`) on a loopback port
    over a runtime opened from `settings`."""
    clock = ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))
    async with open_runtime(settings, Needs(run_sync=False), clock=clock) as rt:
        api = Settings(
            auth=TEST_AUTH,
            api=ApiSettings(
                event_stream=EventStreamSettings(heartbeat_s=0.2, poll_s=0.05, batch=4),
                rate_limit=RateLimitSettings(enabled=False),
            ),
        )
        build = create_console_app if console else create_app
        app = build(api, ports=rt, auth=TEST_AUTH)
        port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None)
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started:
            assert not task.done(), "the server did not start"
            await asyncio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}", rt
        finally:
            server.should_exit = True
            await asyncio.wait_for(task, WAIT_S)


async def talk(http: httpx.AsyncClient, ref: str, session: str, lines: list[str]) -> str:
    """A session of the subject's `lines`; a proposal of `budget` citing line 0 and of
    `supplier` citing line 1 (when said), both approved. Returns the subject id."""
    body = {"kind": "lead", "external_ref": ref}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    who = agent(ref)
    start = {"session_id": session, "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=who), 201)
    for n, text in enumerate(lines):
        keyed = {**who, "Idempotency-Key": f"{session}-line-{n:04d}"}
        message = {"role": "subject", "text": text}
        await ok(
            await http.post(**line(f"/v1/subjects/me/sessions/{session}/messages", message, keyed))
        )
    proposals = [
        {
            "field": field,
            "value": {"type": "text", "value": words},
            "origin": "stated",
            "evidence": {"session_id": session, "message_index": index, "quote": words},
            "based_on_version": 0,
        }
        for field, words, index in (("budget", STATED, 0), ("supplier", KEPT, 1))
        if index < len(lines) and words in lines[index]
    ]
    end = {"proposals": proposals, "summary": {"topic": " and ".join(lines)}}
    keyed = {**who, "Idempotency-Key": f"{session}-end-000001"}
    ended = await ok(
        await http.post(f"/v1/subjects/me/sessions/{session}/end", json=end, headers=keyed)
    )
    sid = str(subject["subject_id"])
    for proposal in ended["proposals"]:
        url = f"/v1/subjects/{sid}/proposals/{proposal['change_id']}/approve"
        await ok(await http.post(url, json={}, headers=ADMIN))
    return sid


async def stream(
    api: str, count: int, who: dict[str, str] = SERVICE, **params: Any
) -> list[dict[str, Any]]:
    """The first `count` events of a fresh stream (a service's: content included)."""
    events: list[dict[str, Any]] = []
    headers = who | params.pop("headers", {})
    async with (
        httpx.AsyncClient(base_url=api, headers=headers, timeout=WAIT_S) as http,
        http.stream("GET", STREAM, params=params) as response,
    ):
        assert response.status_code == 200
        async for text in response.aiter_lines():
            if text.startswith("data:"):
                events.append(json.loads(text.removeprefix("data:")))
                if len(events) == count:
                    break
    return events


def stored_sessions(rt: Runtime, subject_id: str) -> list[SessionRecorded]:
    return [
        e for e in rt.ledger.events.get(uuid.UUID(subject_id)) if isinstance(e, SessionRecorded)
    ]


def replayed(rt: Runtime) -> str:
    """What `factledger replay` prints: every event of the log through the outward encoding."""
    page = TenantEventLog(rt.ledger).read("t1", after=0, limit=10_000)
    return json.dumps([event_body(e, set(), content=True) for e in page.events])


async def memory_drawn_from(rt: Runtime, subject_id: str, words: str) -> str:
    """The id of the subject's memory whose text holds `words` (after syncing the ledger)."""
    worker, backend = rt.sync_worker, rt.backend
    assert worker is not None
    assert backend is not None
    while (report := await worker.run_once()).fed or report.done:
        pass
    memories = await backend.list_memories(namespace_for(uuid.UUID(subject_id)))
    drawn = [m.id for m in memories if words in m.text]
    assert drawn, [m.text for m in memories]
    return drawn[0]


async def imported(http: httpx.AsyncClient, ref: str, session: str, lines: list[str]) -> str:
    """The subject's `lines` as one past session, through `POST /v1/import`; its id."""
    at = datetime(2026, 2, 2, 9, tzinfo=UTC)
    messages = [
        {"role": "subject", "text": text, "at": (at + timedelta(seconds=30 * n)).isoformat()}
        for n, text in enumerate(lines)
    ]
    history = [
        {"type": "subject", "kind": "lead", "ref": ref},
        {
            "type": "session",
            "subject": {"kind": "lead", "ref": ref},
            "session_id": session,
            "channel": "whatsapp",
            "started_at": at.isoformat(),
            "messages": messages,
        },
    ]
    body = "".join(json.dumps(line) + "\n" for line in history).encode()
    headers = {**SERVICE, "content-type": "application/x-ndjson"}
    report = await ok(await http.post("/v1/import", content=body, headers=headers))
    assert report["sessions"] == 1, report
    # The id is keyed under the server's own key: the API names it.
    query = {"kind": "lead", "external_ref": ref}
    found = await http.get("/v1/subjects/lookup", params=query, headers=SERVICE)
    assert found.status_code == 200, found.text
    return str(found.json()["subject_id"])


def cli_env(settings: Settings) -> dict[str, str]:
    """The environment a `factledger` command needs to open the same event store and views
    (wide: a table's cells are not wrapped)."""
    env = {**os.environ, "FACTLEDGER_DATA_DIR": str(settings.data_dir), "COLUMNS": "400"}
    if settings.database_url is not None:
        env["FACTLEDGER_DATABASE_URL"] = settings.database_url.get_secret_value()
        env["FACTLEDGER_EVENT_STORE__KIND"] = "postgres"
        env["FACTLEDGER_EVENT_STORE__SCHEMA_NAME"] = settings.event_store.schema_name  # type: ignore[union-attr]
        env["FACTLEDGER_VIEWS__KIND"] = "postgres"
        env["FACTLEDGER_VIEWS__SCHEMA_NAME"] = settings.views.schema_name  # type: ignore[union-attr]
    return env


def cli(settings: Settings, *args: str) -> str:
    """What a `factledger` command prints (it must succeed)."""
    entry = "from factledger.api.cli.main import main; main()"
    done = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [sys.executable, "-c", entry, *args],
        env=cli_env(settings),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def client(api: str) -> httpx.AsyncClient:
    """A client of the served API whose requests may take as long as a loaded machine needs."""
    return httpx.AsyncClient(base_url=api, timeout=REQUEST_S)
