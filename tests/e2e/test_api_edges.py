"""The API's edges: errors that never echo the caller's input, bodies that never arrive whole,
an OpenAPI document that states the real rules for path parameters and the 400, and tokens
refused by size before they are parsed."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import structlog
from starlette.types import Message
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
PROBE = "<script>alert(1)</script>"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        body = {"kind": "lead", "external_ref": "crm-1"}
        assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).status_code == 201
        yield client


def invalid(response: httpx.Response, field: str) -> dict[str, str]:
    assert response.status_code == 422, response.text
    body: dict[str, str] = response.json()
    assert (body["error"], body["field"]) == ("ValidationError", field)
    return body


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"type": PROBE, "value": "x"}, "value"),
        ({"type": "text", "value": "x", PROBE: 1}, "value.text.*"),
        ({"type": "date", "value": PROBE}, "value.date.value"),
        ({"type": "boolean", "value": PROBE}, "value.boolean.value"),
    ],
    ids=["unknown-tag", "extra-key", "unparsable-date", "not-a-boolean"],
)
async def test_a_422_names_the_field_and_never_echoes_the_input(
    http: httpx.AsyncClient, value: dict[str, Any], field: str
) -> None:
    proposal = {"field": "supplier", "origin": "inferred", "value": value}
    response = await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT)
    invalid(response, field)
    assert "script" not in response.text
    assert "alert" not in response.text


async def test_a_422_states_the_declared_limit(http: httpx.AsyncClient) -> None:
    proposal = {"field": "supplier", "origin": "inferred", "rationale": "x" * 100_000}
    response = await http.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT)
    detail = invalid(response, "rationale")["detail"]
    assert re.fullmatch(r"rationale: should have at most \d+ characters", detail)


async def test_a_body_that_is_not_utf8_is_the_documented_400(http: httpx.AsyncClient) -> None:
    headers = {**SERVICE, "content-type": "application/json"}
    response = await http.post("/v1/subjects", content=b'{"kind": "\xff\xfe"}', headers=headers)
    assert response.status_code == 400
    assert response.json()["error"] == "BadRequest"


async def _send_cut_off(*, chunked: bool) -> tuple[list[Message], list[dict[str, Any]]]:
    """Drives the app as a server would when a body stops mid-way (a malformed chunk the
    server refused, or a client gone): part of the body, then a disconnect."""
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    headers = [(b"authorization", SERVICE["Authorization"].encode())]
    headers.append((b"content-type", b"application/json"))
    if not chunked:
        headers.append((b"content-length", b"200"))
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
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("api", 80),
    }
    incoming: list[Message] = [
        {"type": "http.request", "body": b'{"kind": "le', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    with structlog.testing.capture_logs() as logs:
        await app(scope, receive, send)
    return sent, logs


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
async def test_a_body_cut_off_is_a_400_never_logged_or_counted_as_a_500(chunked: bool) -> None:
    sent, logs = await _send_cut_off(chunked=chunked)
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert [m["status"] for m in starts] == [400]
    served = [e for e in logs if e["event"] == "http.request_served"]
    assert [e["status"] for e in served] == [400]
    assert not [e for e in logs if e.get("log_level") == "error"]


async def test_openapi_states_the_400_and_the_subject_rule(http: httpx.AsyncClient) -> None:
    document = (await http.get("/openapi.json")).json()
    subject_patterns = set()
    for path, operations in document["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in operations.items():
            assert "400" in operation["responses"], (method, path)
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] == "subject":
                    subject_patterns.add(parameter["schema"]["pattern"])
    assert len(subject_patterns) == 1
    pattern = subject_patterns.pop()
    for refused in ("-" * 32, "3f2c1a4e9b7d5e218a0c6d1f2b3c4d5e", "ME", "me/"):
        assert re.fullmatch(pattern, refused) is None
    assert re.fullmatch(pattern, "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e")
    assert re.fullmatch(pattern, "me")


@pytest.mark.parametrize(
    "subject", ["-" * 32, "3f2c1a4e9b7d5e218a0c6d1f2b3c4d5e", "not-a-uuid", "{" + "a" * 32 + "}"]
)
async def test_a_subject_path_that_is_neither_me_nor_a_uuid_is_a_422_naming_it(
    http: httpx.AsyncClient, subject: str
) -> None:
    invalid(await http.get(f"/v1/subjects/{subject}/profile", headers=SERVICE), "subject")


async def test_an_oversized_token_is_a_401(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/whoami", headers=bearer("x" * 60_000))
    assert response.status_code == 401
    assert response.json()["detail"] == "token too large"
