"""Failures over HTTP: unexpected errors become one generic 500 logged once; dependency errors a
503 that leaks nothing; and the API's own logs never carry what people said."""

from __future__ import annotations

from typing import Any

import httpx
import structlog
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.errors import MemoryUnavailableError
from factledger.application.sync.ports import SyncStoreUnavailableError
from factledger.application.sync.types import DeadLetter

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
SECRET = "my sister's diagnosis is confidential"


def client(ports: Runtime) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    return httpx.AsyncClient(transport=transport, base_url="http://api")


async def test_an_unexpected_error_is_a_generic_500_logged_once(ports: Runtime) -> None:
    def explode(*_: Any) -> None:
        raise RuntimeError(SECRET)

    ports.ledger.register_subject = explode  # type: ignore[method-assign]
    with structlog.testing.capture_logs() as logs:
        async with client(ports) as http:
            body = {"kind": "lead", "external_ref": "crm-1"}
            response = await http.post("/v1/subjects", json=body, headers=SERVICE)
    assert response.status_code == 500
    assert response.json() == {"error": "InternalError", "detail": "unexpected error"}
    assert SECRET not in response.text
    failures = [entry for entry in logs if entry["event"] == "api.unexpected_error"]
    assert len(failures) == 1
    assert failures[0]["error_type"] == "RuntimeError"
    served = [entry for entry in logs if entry["event"] == "http.request_served"]
    assert served[0]["status"] == 500
    assert served[0]["route"] == "/v1/subjects"


async def test_a_failing_dependency_is_a_503_without_its_message(ports: Runtime) -> None:
    def unavailable(*_: Any) -> None:
        raise MemoryUnavailableError("backend at internal-host:9999 refused")

    ports.ledger.register_subject = unavailable  # type: ignore[method-assign]
    async with client(ports) as http:
        body = {"kind": "lead", "external_ref": "crm-1"}
        response = await http.post("/v1/subjects", json=body, headers=SERVICE)
    assert response.status_code == 503
    assert response.json()["error"] == "MemoryUnavailableError"
    assert "internal-host" not in response.text


async def test_a_sync_store_that_is_down_is_a_503_with_retry_after(ports: Runtime) -> None:
    async def unavailable(**_: Any) -> list[DeadLetter]:
        raise SyncStoreUnavailableError("sync store at internal-host:5432 is down")

    assert ports.sync_store is not None
    ports.sync_store.dead_letters = unavailable  # type: ignore[method-assign]
    async with client(ports) as http:
        response = await http.get("/v1/dead-letters", headers=bearer(token(Role.ADMIN)))
    assert response.status_code == 503
    assert response.json()["error"] == "SyncStoreUnavailableError"
    assert response.headers["Retry-After"] == "5"
    assert "internal-host" not in response.text


async def test_unknown_routes_and_methods_keep_the_error_shape(ports: Runtime) -> None:
    async with client(ports) as http:
        missing = await http.get("/v1/nothing-here", headers=SERVICE)
        wrong = await http.delete("/v1/subjects", headers=SERVICE)
    assert (missing.status_code, missing.json()["error"]) == (404, "NotFound")
    assert (wrong.status_code, wrong.json()["error"]) == (405, "MethodNotAllowed")


async def test_the_api_logs_ids_and_counts_never_content(ports: Runtime) -> None:
    with structlog.testing.capture_logs() as logs:
        async with client(ports) as http:
            body = {"kind": "lead", "external_ref": "crm-1"}
            await http.post("/v1/subjects", json=body, headers=SERVICE)
            start = {"session_id": "s-1", "channel": "chat"}
            await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)
            message = {"role": "subject", "text": SECRET}
            await http.post(**line("/v1/subjects/me/sessions/s-1/messages", message, AGENT))
            await http.post("/v1/subjects/me/recall", json={"query": SECRET}, headers=AGENT)
            await http.post("/v1/subjects/me/sessions/s-1/end", json={}, headers=AGENT)
    assert logs
    assert SECRET not in repr(logs)
    assert "diagnosis" not in repr(logs)
