"""Two API processes on one PostgreSQL (ledger, views, short-term memory, sync queue and the
pgvector backend): either can serve any request of a session, and a retry that lands on the
other process (which lacks the first one's idempotency cache) acts once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings

pytestmark = pytest.mark.integration

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-pg"))
REVIEWER = bearer(token(Role.REVIEWER))


def url_of(location: PostgresLocation) -> str:
    auth = f"{location.user}:{location.password}"
    if location.host.startswith("/"):
        return f"postgresql://{auth}@:{location.port}/{location.dbname}?host={location.host}"
    return f"postgresql://{auth}@{location.host}:{location.port}/{location.dbname}"


@pytest.fixture
async def two_apis(
    postgres: PostgresLocation, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    suffix = uuid4().hex[:8]
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(url_of(postgres)),
        event_store={"kind": "postgres", "schema_name": f"api_events_{suffix}"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": f"api_views_{suffix}"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": f"api_short_{suffix}"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": f"api_sync_{suffix}"}},  # type: ignore[arg-type]
        backend={  # type: ignore[arg-type]
            "kind": "pgvector",
            "schema_name": f"api_memory_{suffix}",
            "app_role": f"api_app_{suffix}",
        },
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        # What either process answers is asked here, not how fast.
        recall={"recall_budget_s": 30.0, "context_budget_s": 30.0},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with AsyncExitStack() as stack:
        clients = []
        for name in ("a", "b"):
            runtime = await stack.enter_async_context(open_runtime(settings))
            app = create_app(settings, ports=runtime)
            transport = httpx.ASGITransport(app=app)
            http = httpx.AsyncClient(transport=transport, base_url=f"http://api-{name}")
            stack.push_async_callback(http.aclose)
            clients.append(http)
        yield clients[0], clients[1]


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_two_processes_share_sessions_ledger_and_views(
    two_apis: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    a, b = two_apis
    register = {"kind": "lead", "external_ref": "crm-pg"}
    subject = await ok(await a.post("/v1/subjects", json=register, headers=SERVICE), 201)
    start = {"session_id": "pg-1", "channel": "voice"}
    await ok(await a.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    said = {"role": "subject", "text": "We work with Supplier A."}
    await ok(await b.post(**line("/v1/subjects/me/sessions/pg-1/messages", said, AGENT)))
    ended = await ok(await a.post("/v1/subjects/me/sessions/pg-1/end", json={}, headers=AGENT))
    assert ended["message_count"] == 1

    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "stated",
        "evidence": {"session_id": "pg-1", "message_index": 0, "quote": "Supplier A"},
    }
    keyed = {**AGENT, "Idempotency-Key": "pg-propose-0001"}
    first = await ok(await b.post("/v1/subjects/me/proposals", json=proposal, headers=keyed), 201)
    retry = await ok(await a.post("/v1/subjects/me/proposals", json=proposal, headers=keyed), 201)
    assert retry == first

    url = f"/v1/subjects/{subject['subject_id']}/proposals/{first['change_id']}/approve"
    # Keyed: the saved response commits with the approval's events (ADR 0027).
    reviewed = {**REVIEWER, "Idempotency-Key": "pg-approve-0001"}
    approved = await ok(await a.post(url, json={}, headers=reviewed))
    replayed = await b.post(url, json={}, headers=reviewed)
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert await ok(replayed) == approved
    profile = await ok(await b.get("/v1/subjects/me/profile", headers=AGENT))
    assert profile["version"] == 1
    assert profile["fields"]["supplier"]["display"] == "Supplier A"
    queue = await ok(await b.get("/v1/proposals/pending", headers=REVIEWER))
    assert queue["items"] == []
    events = await ok(await a.get(f"/v1/subjects/{subject['subject_id']}/events", headers=REVIEWER))
    proposed = [e for e in events["events"] if e["topic"].endswith("change_proposed.v1")]
    assert len(proposed) == 1
    # Recall reads the shared pgvector backend from either process.
    for api in (a, b):
        answer = await ok(
            await api.post("/v1/subjects/me/recall", json={"query": "supplier"}, headers=AGENT)
        )
        assert answer["degraded"] is None
    expiry = {"valid_until": "2099-01-01T00:00:00Z"}
    expiring = {**AGENT, "Idempotency-Key": "pg-expire-0001"}
    expired = await ok(
        await a.post(
            "/v1/subjects/me/profile/fields/supplier/expire", json=expiry, headers=expiring
        )
    )
    again = await b.post(
        "/v1/subjects/me/profile/fields/supplier/expire", json=expiry, headers=expiring
    )
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert await ok(again) == expired
    assert expired["applied"] is True
    ready = await ok(await b.get("/readyz"))
    assert ready["checks"]["memory"] == "ok"
