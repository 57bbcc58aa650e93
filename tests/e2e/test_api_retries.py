"""Retries over HTTP that land on another API process: saved responses are shared (SQLite on
one node, PostgreSQL across nodes), concurrent twins never both run, appends carry message ids,
and ending a session is all or nothing and answers a retry with what was recorded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.application.sessions.types import (
    SessionBufferUnavailableError,
    SessionKey,
)
from factledger.domain.transcript import Message

REF = "crm-retry"
AGENT = bearer(token(Role.AGENT, kind="lead", ref=REF, principal_id="wa-bot"))
SERVICE = bearer(token(Role.SERVICE))
MESSAGES = "/v1/subjects/me/sessions/wa-1/messages"
END = "/v1/subjects/me/sessions/wa-1/end"

Clients = tuple[httpx.AsyncClient, httpx.AsyncClient]


def client(ports: Runtime, name: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    return httpx.AsyncClient(transport=transport, base_url=f"http://api-{name}")


@pytest.fixture
async def two_apis(ports: Runtime, tmp_path: Path) -> AsyncIterator[Clients]:
    """Two apps on one ledger and buffer, each with its own handle on one SQLite key store,
    as two API processes of one node have."""
    path = tmp_path / "ledger-idempotency.sqlite"
    stores = [SqliteIdempotencyStore(path), SqliteIdempotencyStore(path)]
    a = client(replace(ports, idempotency=stores[0]), "a")
    b = client(replace(ports, idempotency=stores[1]), "b")
    async with a, b:
        yield a, b
    for store in stores:
        store.close()


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def start_session(http: httpx.AsyncClient, session_id: str = "wa-1") -> None:
    body = {"kind": "lead", "external_ref": REF}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    start = {"session_id": session_id, "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)


def keyed(key: str) -> dict[str, str]:
    return {**AGENT, "Idempotency-Key": key}


async def transcript(http: httpx.AsyncClient) -> list[str]:
    out = await ok(await http.get(MESSAGES, headers=AGENT))
    return [m["text"] for m in out["messages"]]


async def test_a_retry_on_the_other_process_replays_the_saved_response(two_apis: Clients) -> None:
    a, b = two_apis
    await start_session(a)
    message = {"role": "subject", "text": "We work with Supplier A."}
    first = await ok(await a.post(**line(MESSAGES, message, keyed("append-0001"))))
    retry = await b.post(**line(MESSAGES, message, keyed("append-0001")))
    assert await ok(retry) == first
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert await transcript(a) == ["We work with Supplier A."]


async def test_a_key_reused_with_another_body_is_refused_on_the_other_process(
    two_apis: Clients,
) -> None:
    a, b = two_apis
    await start_session(a)
    await ok(
        await a.post(**line(MESSAGES, {"role": "subject", "text": "one"}, keyed("k-00000001")))
    )
    reused = await b.post(**line(MESSAGES, {"role": "subject", "text": "two"}, keyed("k-00000001")))
    assert reused.status_code == 422
    assert reused.json()["field"] == "Idempotency-Key"
    assert await transcript(b) == ["one"]


async def test_concurrent_first_requests_with_one_key_never_both_run(
    two_apis: Clients, ports: Runtime
) -> None:
    a, b = two_apis
    await start_session(a)
    buffer = ports.session_buffer
    assert buffer is not None
    inside, release = asyncio.Event(), asyncio.Event()
    real_append = buffer.append

    async def held_append(key: SessionKey, message: Message, **kw: Any) -> int:
        inside.set()
        await release.wait()
        return await real_append(key, message, **kw)

    buffer.append = held_append  # type: ignore[method-assign]
    message = {"role": "subject", "text": "only once"}
    first = asyncio.create_task(a.post(**line(MESSAGES, message, keyed("twin-0001"))))
    await inside.wait()
    twin = await b.post(**line(MESSAGES, message, keyed("twin-0001")))
    assert twin.status_code == 409
    assert twin.json()["field"] == "Idempotency-Key"
    assert "retry later" in twin.json()["detail"]
    release.set()
    assert (await ok(await first))["index"] == 0
    buffer.append = real_append  # type: ignore[method-assign]
    replay = await ok(await b.post(**line(MESSAGES, message, keyed("twin-0001"))))
    assert replay["index"] == 0
    assert await transcript(a) == ["only once"]


async def test_a_caller_message_id_makes_an_unkeyed_retry_a_no_op(two_apis: Clients) -> None:
    a, b = two_apis
    await start_session(a)
    message = {"role": "subject", "text": "hello", "message_id": "wa-msg-1"}
    first = await ok(await a.post(**line(MESSAGES, message, AGENT)))
    again = await ok(await b.post(**line(MESSAGES, message, AGENT)))
    other = {"role": "agent", "text": "hi", "message_id": "wa-msg-2"}
    second = await ok(await b.post(**line(MESSAGES, other, AGENT)))
    assert (first["index"], again["index"], second["index"]) == (0, 0, 1)
    assert await transcript(a) == ["hello", "hi"]


def stated(index: int, quote: str, **extra: Any) -> dict[str, Any]:
    return {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "stated",
        "evidence": {"session_id": "wa-1", "message_index": index, "quote": quote},
        **extra,
    }


async def test_a_bad_proposal_records_nothing_and_keeps_the_buffer(two_apis: Clients) -> None:
    a, b = two_apis
    await start_session(a)
    message = {"role": "subject", "text": "We work with Supplier A."}
    await ok(await a.post(**line(MESSAGES, message, AGENT)))
    bad = {"proposals": [stated(0, "Supplier A"), stated(0, "Supplier A", based_on_version=7)]}
    refused = await a.post(END, json=bad, headers=keyed("end-00000001"))
    assert refused.status_code == 422, refused.text
    # Nothing recorded: the session is still active with its message, and no history exists.
    assert await transcript(b) == ["We work with Supplier A."]
    history = await ok(await b.get("/v1/subjects/me/sessions/wa-1", headers=AGENT))
    assert history["message_count"] == 1
    # The corrected end (a new request) records the transcript and the proposal together.
    good = {"proposals": [stated(0, "Supplier A")]}
    ended = await ok(await b.post(END, json=good, headers=keyed("end-00000002")))
    assert ended["message_count"] == 1
    assert [p["status"] for p in ended["proposals"]] == ["pending"]


async def test_a_retried_end_returns_the_recorded_result_not_404(two_apis: Clients) -> None:
    a, b = two_apis
    await start_session(a)
    await ok(
        await a.post(**line(MESSAGES, {"role": "subject", "text": "Supplier A it is."}, AGENT))
    )
    body = {"summary": {"topic": "suppliers"}, "proposals": [stated(0, "Supplier A")]}
    first = await ok(await a.post(END, json=body, headers=AGENT))
    # No key, other process: the ledger knows the session, so the answer is the first one.
    retry = await ok(await b.post(END, json=body, headers=AGENT))
    assert retry == first
    other = {"proposals": [stated(0, "Supplier A", change_id=str(uuid4()))]}
    conflicting = await b.post(END, json=other, headers=AGENT)
    assert conflicting.status_code == 409
    never = await b.post("/v1/subjects/me/sessions/wa-9/end", json={}, headers=AGENT)
    assert never.status_code == 404


async def test_an_end_interrupted_after_the_save_is_finished_by_the_retry(
    two_apis: Clients, ports: Runtime
) -> None:
    a, b = two_apis
    await start_session(a)
    await ok(await a.post(**line(MESSAGES, {"role": "subject", "text": "hi"}, AGENT)))
    buffer = ports.session_buffer
    assert buffer is not None
    real_discard = buffer.discard

    async def failing_discard(key: SessionKey) -> None:
        raise SessionBufferUnavailableError("buffer down")

    buffer.discard = failing_discard  # type: ignore[method-assign]
    failed = await a.post(END, json={}, headers=keyed("end-crash-01"))
    assert failed.status_code == 503
    buffer.discard = real_discard  # type: ignore[method-assign]
    retried = await ok(await b.post(END, json={}, headers=keyed("end-crash-01")))
    assert retried["message_count"] == 1
    gone = await b.get("/v1/subjects/me/sessions/wa-1", headers=AGENT)
    assert gone.status_code == 404


def url_of(location: PostgresLocation) -> str:
    auth = f"{location.user}:{location.password}"
    if location.host.startswith("/"):
        return f"postgresql://{auth}@:{location.port}/{location.dbname}?host={location.host}"
    return f"postgresql://{auth}@{location.host}:{location.port}/{location.dbname}"


@pytest.mark.integration
async def test_two_apps_on_one_postgres_share_idempotency_keys(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    suffix = uuid4().hex[:8]
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(url_of(postgres)),
        event_store={"kind": "postgres", "schema_name": f"retry_events_{suffix}"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": f"retry_views_{suffix}"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": f"retry_short_{suffix}"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with AsyncExitStack() as stack:
        clients = []
        for name in ("a", "b"):
            runtime = await stack.enter_async_context(open_runtime(settings))
            assert runtime.idempotency is not None
            ports = runtime
            clients.append(await stack.enter_async_context(client(ports, name)))
        a, b = clients
        await start_session(a)
        # The agent's line: a key is scoped by the principal, and the channel is another one.
        message = {"role": "agent", "text": "Supplier A?"}
        first = await ok(await a.post(**line(MESSAGES, message, keyed("pg-key-0001"))))
        retry = await b.post(**line(MESSAGES, message, keyed("pg-key-0001")))
        assert await ok(retry) == first
        assert retry.headers["Idempotent-Replayed"] == "true"
        reused = await b.post(
            **line(MESSAGES, {"role": "agent", "text": "x"}, keyed("pg-key-0001"))
        )
        assert reused.status_code == 422
        assert await transcript(b) == ["Supplier A?"]
        ended = await ok(await a.post(END, json={}, headers=AGENT))
        assert await ok(await b.post(END, json={}, headers=AGENT)) == ended
