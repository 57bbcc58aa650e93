"""`POST /v1/import` over HTTP: a streamed NDJSON body through the same use case as the CLI,
for services and admins only, idempotent, resumable by import id, bad lines reported."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
from support.api_harness import TEST_AUTH, asgi_client, bearer, token
from support.key_stores import pinned_subject_id

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.history import HistoryShape, history_bytes

SHAPE = HistoryShape(subjects=4, sessions_per_subject=3, messages_per_session=8)
SERVICE = bearer(token(Role.SERVICE))
NDJSON = {"content-type": "application/x-ndjson"}


async def chunked(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def events(ports: Runtime) -> int:
    return int(ports.ledger.recorder.max_notification_id() or 0)


async def post(
    http: httpx.AsyncClient, data: bytes, *, headers: dict[str, str] = SERVICE, **params: str
) -> httpx.Response:
    return await http.post(
        "/v1/import", content=chunked(data), params=params, headers={**headers, **NDJSON}
    )


async def test_a_streamed_history_is_imported_and_reported(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    response = await post(http, history_bytes(SHAPE), import_id="crm-export-1")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["finished"]
    assert (report["subjects"], report["sessions"], report["reviews"]) == (4, 12, 12)
    assert report["messages"] + report["withheld"] == SHAPE.messages
    assert report["proposals"] is None  # the step runs on the sync queue, after the answer
    subject = ports.ledger.subject("t1", pinned_subject_id("t1", "lead", "crm-00003"))
    assert len(subject.sessions) == 3


async def test_posting_it_again_records_nothing(http: httpx.AsyncClient, ports: Runtime) -> None:
    data = history_bytes(SHAPE)
    first = (await post(http, data, import_id="crm-export-1")).json()
    before = events(ports)
    again = (await post(http, data, import_id="crm-export-1")).json()
    assert events(ports) == before
    assert again == first | {"resumed_after": first["lines"]}
    unnamed = (await post(http, data)).json()  # no id: every line re-checked, nothing recorded
    assert events(ports) == before
    assert (unnamed["sessions"], unnamed["unchanged"]) == (0, 12)


async def test_a_body_past_the_request_limit_is_still_imported(ports: Runtime) -> None:
    app = create_app(ports=ports, auth=TEST_AUTH, max_body_bytes=2048)
    data = history_bytes(SHAPE)
    assert len(data) > 5 * 2048
    async with asgi_client(app) as http:
        response = await post(http, data)
        refused = await http.post("/v1/subjects", content=b"x" * 4096, headers=SERVICE)
    assert response.status_code == 200
    assert response.json()["sessions"] == 12
    assert refused.status_code == 413


async def test_bad_lines_are_reported_by_number_and_stop_when_asked(
    http: httpx.AsyncClient,
) -> None:
    good = json.dumps({"type": "subject", "kind": "lead", "ref": "crm-1"})
    bad = json.dumps({"type": "session", "subject": {"kind": "lead", "ref": "crm-1"}})
    data = f"{good}\n{bad}\n{good}\n".encode()
    skipped = (await post(http, data)).json()
    assert skipped["finished"]
    assert skipped["errors"] == [
        {"line": 2, "field": "session_id", "rule": "Field required", "error": "ImportLineError"}
    ]
    stopped = (await post(http, data, on_error="stop")).json()
    assert stopped["stopped"]
    assert stopped["lines"] == 1


async def test_another_file_under_a_used_import_id_is_a_conflict(http: httpx.AsyncClient) -> None:
    await post(http, history_bytes(SHAPE), import_id="crm-export-1")
    other = history_bytes(
        HistoryShape(subjects=4, sessions_per_subject=3, messages_per_session=8, seed=8)
    )
    response = await post(http, other, import_id="crm-export-1")
    assert response.status_code == 409
    assert response.json()["error"] == "ImportMismatchError"
    assert response.json()["field"] == "import_id"


async def test_only_services_and_admins_import(http: httpx.AsyncClient) -> None:
    data = history_bytes(SHAPE)
    for role in (Role.AGENT, Role.REVIEWER, Role.ANALYST):
        jwt = token(role, kind="lead", ref="crm-00000") if role is Role.AGENT else token(role)
        assert (await post(http, data, headers=bearer(jwt))).status_code == 403
    assert (await post(http, data, headers=bearer(token(Role.ADMIN)))).status_code == 200


async def test_subjects_land_in_the_tokens_tenant(http: httpx.AsyncClient, ports: Runtime) -> None:
    await post(http, history_bytes(SHAPE), headers=bearer(token(Role.SERVICE, tenant="t2")))
    subject_id = pinned_subject_id("t2", "lead", "crm-00000")
    assert ports.ledger.subject("t2", subject_id).tenant == "t2"
