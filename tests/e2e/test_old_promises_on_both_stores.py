"""Issue 34's classes whose other tests run on the in-memory harness, here on the embedded
default (SQLite files) and on PostgreSQL + pgvector, through the HTTP API of a server on
loopback and MCP over the same runtime:
- a field only proposed, and one whose proposal was rejected, is forgotten, and its words are
  nowhere in the subject's events, the review queue or the stream read from the start;
- an import report names the caller's own keys by position, in the answer and in the stores;
- an unknown MCP tool's name and a body cut off mid-way never reach the logs as written (the
  cut-off body is a 400, never a 500);
- the stream's cursors are opaque, and refused in another tenant's stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import structlog
from mcp import Client
from psycopg import sql
from support.api_harness import TEST_AUTH, bearer, line, token
from support.forgotten_words import (
    ADMIN,
    BACKENDS,
    SERVICE,
    STREAM,
    agent,
    backend_settings,
    client,
    ok,
    serving,
    stream,
)
from support.mcp_story import call, error

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.mcp.server import build_server
from factledger.api.settings import PostgresEventStoreSettings, Settings

REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-9"))
SAID = "Our budget is forty thousand euros and we buy from Lantern Quarry."
PENDING_WORDS = ("Forty-Thousand-Pending", "if the Marmoset board agrees")
REJECTED_WORDS = ("Lantern-Quarry-Rejected", "Tapir rationale")
CALLER_KEY = "ottoline.fairweather@example.com"  # a key name the caller chose


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


async def a_lead_who_said(http: httpx.AsyncClient, ref: str) -> str:
    body = {"kind": "lead", "external_ref": ref}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    who = agent(ref)
    start = {"session_id": "wa-1", "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=who), 201)
    message = {"role": "subject", "text": SAID}
    await ok(await http.post(**line("/v1/subjects/me/sessions/wa-1/messages", message, who)))
    await ok(await http.post("/v1/subjects/me/sessions/wa-1/end", json={}, headers=who))
    return str(subject["subject_id"])


async def propose(http: httpx.AsyncClient, ref: str, field: str, words: tuple[str, str]) -> str:
    body = {
        "based_on_version": 0,
        "field": field,
        "value": {"type": "text", "value": words[0]},
        "origin": "stated",
        "condition": words[1],
        "rationale": f"{words[1]}, said in the first chat",
        "evidence": {"session_id": "wa-1", "message_index": 0, "quote": "forty thousand"},
    }
    created = await ok(
        await http.post("/v1/subjects/me/proposals", json=body, headers=agent(ref)), 201
    )
    return str(created["change_id"])


async def test_a_field_only_proposed_or_rejected_is_forgotten_everywhere(
    settings: Settings,
) -> None:
    async with serving(settings) as (api, _), client(api) as http:
        ref = "crm-pending"
        subject_id = await a_lead_who_said(http, ref)
        pending = await propose(http, ref, "budget", PENDING_WORDS)
        rejected = await propose(http, ref, "supplier", REJECTED_WORDS)
        reject = f"/v1/subjects/{subject_id}/proposals/{rejected}/reject"
        await ok(await http.post(reject, json={"reason": "not what was said"}, headers=REVIEWER))
        words = (*PENDING_WORDS, *REJECTED_WORDS)
        before = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ADMIN))
        assert all(w in json.dumps(before) for w in words)  # there to be forgotten

        for field, change in (("budget", pending), ("supplier", rejected)):
            forget = {"field": field, "reason": "the subject asked"}
            done = await ok(
                await http.post("/v1/subjects/me/forget", json=forget, headers=agent(ref))
            )
            assert done["applied"] is True
            assert done["redacted_changes"] == [change]

        for change in (pending, rejected):
            read = await ok(
                await http.get(f"/v1/subjects/{subject_id}/proposals/{change}", headers=REVIEWER)
            )
            assert read["redacted"] is True
            assert [read[k] for k in ("value", "condition", "rationale", "evidence")] == [None] * 4
        events = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ADMIN))
        queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
        streamed = await stream(api, len(events["events"]))
        for read in (events, queue, streamed):
            assert not [w for w in words if w in json.dumps(read)]


def files_holding(root: Path, needle: str) -> list[str]:
    return [
        str(p.relative_to(root))
        for p in sorted(root.rglob("*"))
        if p.is_file() and needle.encode() in p.read_bytes()
    ]


def tables_holding(settings: Settings, needle: str) -> list[str]:
    """The rows of this test's schemas (their shared suffix) that hold `needle`."""
    store = settings.event_store
    assert isinstance(store, PostgresEventStoreSettings)
    suffix = store.schema_name.rpartition("_")[2]
    conninfo = settings.database_url.get_secret_value()  # type: ignore[union-attr]
    found = []
    with psycopg.connect(conninfo) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema LIKE %s",
            (f"%{suffix}",),
        ).fetchall()
        assert tables
        for schema, table in tables:
            query = sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, table))
            rows = conn.execute(query).fetchall()
            found += [f"{schema}.{table}" for (row,) in rows if needle in row]
    return found


async def test_an_import_report_names_the_callers_keys_by_position_only(
    settings: Settings,
) -> None:
    line_of_the_caller = {
        "type": "subject",
        "kind": "lead",
        "ref": "crm-imported",
        CALLER_KEY: "a value of the caller's",
    }
    body = (json.dumps(line_of_the_caller) + "\n").encode()
    headers = {**SERVICE, "content-type": "application/x-ndjson"}
    async with serving(settings) as (api, _), client(api) as http:
        answer = await http.post(
            "/v1/import", content=body, params={"import_id": "crm-export-9"}, headers=headers
        )
        again = await http.post(
            "/v1/import", content=body, params={"import_id": "crm-export-9"}, headers=headers
        )
    for report in (answer, again):
        assert report.status_code == 200, report.text
        assert [e["field"] for e in report.json()["errors"]] == ["keys[3]"]
        assert CALLER_KEY not in report.text
    if isinstance(settings.event_store, PostgresEventStoreSettings):
        assert tables_holding(settings, CALLER_KEY) == []
    else:
        assert files_holding(settings.data_dir, CALLER_KEY) == []


async def _cut_off_body(app: Any) -> list[int]:
    """The app driven as a server drives it when a client leaves mid-upload."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/subjects",
        "raw_path": b"/v1/subjects",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"authorization", SERVICE["Authorization"].encode()),
            (b"content-type", b"application/json"),
            (b"content-length", b"200"),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("api", 80),
    }
    incoming: list[dict[str, Any]] = [
        {
            "type": "http.request",
            "body": b'{"kind": "lead", "external_ref": "Tapir',
            "more_body": True,
        },
        {"type": "http.disconnect"},
    ]
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(int(message["status"]))

    await app(scope, receive, send)
    return statuses


async def test_logs_hold_no_tool_name_or_body_the_caller_wrote(settings: Settings) -> None:
    made_up = "exfiltrate_" + "the-callers-own-words-" * 200
    jwt = token(Role.AGENT, kind="lead", ref="crm-mcp", principal_id="voice-bot")
    async with serving(settings) as (api, rt):
        async with client(api) as http:
            body = {"kind": "lead", "external_ref": "crm-mcp"}
            await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
        app = create_app(ports=rt, auth=TEST_AUTH)
        verifier = TokenVerifier(TEST_AUTH)
        with structlog.testing.capture_logs() as logs:
            async with Client(build_server(app.state.api, lambda _: verifier.verify(jwt))) as mcp:
                result = await call(mcp, made_up)
            statuses = await _cut_off_body(app)
    assert error(result)["field"] == "name"
    failed = [e for e in logs if e["event"] == "mcp.tool_failed"]
    assert [e["tool"] for e in failed] == ["(unknown)"]
    assert statuses == [400]
    assert not [e for e in logs if e.get("log_level") == "error"]
    assert "the-callers-own-words" not in repr(logs)
    assert "Tapir" not in repr(logs)


async def test_stream_cursors_are_opaque_and_refused_in_another_tenant(settings: Settings) -> None:
    other = bearer(token(Role.SERVICE, tenant="t2"))
    async with serving(settings) as (api, _), client(api) as http:
        for ref in ("crm-1", "crm-2"):
            body = {"kind": "lead", "external_ref": ref}
            await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
        body = {"kind": "lead", "external_ref": "crm-elsewhere"}
        await ok(await http.post("/v1/subjects", json=body, headers=other), 201)
        mine = await stream(api, 2)
        crossed = await http.get(STREAM, headers=other | {"Last-Event-ID": mine[0]["cursor"]})
        after = await http.get(STREAM, params={"after": mine[0]["cursor"]}, headers=other)
        numeric = await http.get(STREAM, params={"after": "2"}, headers=SERVICE)
    assert all("position" not in e for e in mine)
    assert not any(e["cursor"].isdigit() for e in mine)
    assert (crossed.status_code, crossed.json()["field"]) == (422, "Last-Event-ID")
    assert (after.status_code, after.json()["field"]) == (422, "after")
    assert numeric.status_code == 422


CARD = "4111 1111 1111 1111"  # a payment card number the detectors know (Luhn-valid)


async def test_a_reason_the_safety_filter_refuses_is_a_422_and_nothing_is_decided(
    settings: Settings,
) -> None:
    """Reasons are kept as long as the subject: one holding a card number is refused, naming
    the field, in each place a reason is given, and nothing is recorded."""
    async with serving(settings) as (api, _), client(api) as http:
        ref = "crm-reasons"
        subject_id = await a_lead_who_said(http, ref)
        change = await propose(http, ref, "budget", PENDING_WORDS)
        bad = f"card {CARD} on file"
        refused = [
            await http.post(
                f"/v1/subjects/{subject_id}/proposals/{change}/reject",
                json={"reason": bad},
                headers=REVIEWER,
            ),
            await http.post(
                "/v1/proposals/pending/decisions",
                json={
                    "decision": "reject",
                    "reason": bad,
                    "changes": [{"subject_id": subject_id, "change_id": change}],
                },
                headers=REVIEWER,
            ),
            await http.post(
                "/v1/subjects/me/forget",
                json={"field": "budget", "reason": bad},
                headers=agent(ref),
            ),
            await http.request(
                "DELETE", f"/v1/subjects/{subject_id}", json={"reason": bad}, headers=ADMIN
            ),
        ]
        for answer in refused:
            assert answer.status_code == 422, answer.text
            assert (answer.json()["error"], answer.json()["field"]) == (
                "UnsafeFieldError",
                "reason",
            )
            assert CARD not in answer.text
        read = await ok(
            await http.get(f"/v1/subjects/{subject_id}/proposals/{change}", headers=REVIEWER)
        )
        assert read["status"] == "pending"  # nothing was decided, forgotten or erased
        events = await ok(await http.get(f"/v1/subjects/{subject_id}/events", headers=ADMIN))
        assert CARD not in json.dumps(events)
        # A reason without one is taken
        fine = {"reason": "not what was said"}
        url = f"/v1/subjects/{subject_id}/proposals/{change}/reject"
        await ok(await http.post(url, json=fine, headers=REVIEWER))
