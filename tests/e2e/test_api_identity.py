"""Identity over HTTP: tokens decide the tenant, the role and the subject; nothing else does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import AuthSettings, JwtKeySettings
from factledger.testing.manual_clock import ManualClock


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH, max_body_bytes=4096)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        yield http


async def register(http: httpx.AsyncClient, ref: str, *, tenant: str = "t1") -> str:
    response = await http.post(
        "/v1/subjects",
        json={"kind": "lead", "external_ref": ref},
        headers=bearer(token(Role.SERVICE, tenant=tenant)),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["subject_id"])


async def test_requests_without_a_token_are_refused(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/whoami")
    assert response.status_code == 401
    assert response.json()["error"] == "AuthenticationError"
    assert response.headers["www-authenticate"] == "Bearer"


async def test_an_expired_token_is_refused(client: httpx.AsyncClient) -> None:
    stale = token(Role.ADMIN, ttl=timedelta(seconds=-120))
    response = await client.get("/v1/whoami", headers=bearer(stale))
    assert response.status_code == 401
    assert response.json()["detail"] == "token expired"


async def test_a_forged_token_is_refused(client: httpx.AsyncClient) -> None:
    forger = AuthSettings(
        issuer=TEST_AUTH.issuer,
        audience=TEST_AUTH.audience,
        keys=(JwtKeySettings(kid="test", secret="forged-forged-forged-forged-forged-0000"),),  # type: ignore[arg-type]
    )
    forged = token(Role.ADMIN, auth=forger)
    response = await client.get("/v1/whoami", headers=bearer(forged))
    assert response.status_code == 401
    assert response.json()["detail"] == "token signature invalid"


async def test_whoami_reports_the_verified_identity(client: httpx.AsyncClient) -> None:
    subject_id = await register(client, "crm-1")
    agent = token(Role.AGENT, kind="lead", ref="crm-1", principal_id="voice-bot")
    response = await client.get("/v1/whoami", headers=bearer(agent))
    assert response.status_code == 200
    assert response.json() == {
        "principal_id": "voice-bot",
        "tenant": "t1",
        "role": "agent",
        "subject_id": subject_id,
    }


async def test_an_agent_reads_its_own_subject_as_me(client: httpx.AsyncClient) -> None:
    subject_id = await register(client, "crm-2")
    agent = bearer(token(Role.AGENT, kind="lead", ref="crm-2"))
    for path in ("/v1/subjects/me", f"/v1/subjects/{subject_id}"):
        response = await client.get(path, headers=agent)
        assert response.status_code == 200, response.text
        assert response.json()["subject_id"] == subject_id


async def test_an_agent_cannot_read_another_subject(client: httpx.AsyncClient) -> None:
    await register(client, "crm-3")
    other = await register(client, "crm-4")
    agent = bearer(token(Role.AGENT, kind="lead", ref="crm-3"))
    response = await client.get(f"/v1/subjects/{other}", headers=agent)
    assert response.status_code == 403
    assert response.json()["error"] == "PermissionDeniedError"


async def test_another_tenant_sees_the_same_404_as_for_no_subject(
    client: httpx.AsyncClient,
) -> None:
    subject_id = await register(client, "crm-5", tenant="t1")
    foreign = bearer(token(Role.REVIEWER, tenant="t2"))
    theirs = await client.get(f"/v1/subjects/{subject_id}", headers=foreign)
    nobody = await client.get("/v1/subjects/00000000-0000-5000-8000-000000000000", headers=foreign)
    assert theirs.status_code == nobody.status_code == 404
    assert theirs.json()["error"] == nobody.json()["error"] == "SubjectNotFoundError"
    # Same tenant, same reviewer role: allowed.
    ours = await client.get(f"/v1/subjects/{subject_id}", headers=bearer(token(Role.REVIEWER)))
    assert ours.status_code == 200


async def test_registration_is_idempotent_and_scoped_to_the_token_tenant(
    client: httpx.AsyncClient,
) -> None:
    first = await register(client, "crm-6", tenant="t1")
    again = await register(client, "crm-6", tenant="t1")
    elsewhere = await register(client, "crm-6", tenant="t2")
    assert first == again
    assert elsewhere != first


async def test_agents_cannot_register_subjects(client: httpx.AsyncClient) -> None:
    agent = bearer(token(Role.AGENT, kind="lead", ref="crm-7"))
    response = await client.post(
        "/v1/subjects", json={"kind": "lead", "external_ref": "crm-99"}, headers=agent
    )
    assert response.status_code == 403


async def test_malformed_bodies_name_the_field_without_echoing_it(
    client: httpx.AsyncClient,
) -> None:
    service = bearer(token(Role.SERVICE))
    response = await client.post(
        "/v1/subjects", json={"kind": "Not A Kind!", "external_ref": "x"}, headers=service
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "ValidationError"
    assert body["field"] == "kind"
    assert "Not A Kind!" not in response.text
    broken = await client.post(
        "/v1/subjects",
        content=b"{not json",
        headers={**service, "content-type": "application/json"},
    )
    assert broken.status_code == 422
    assert broken.json()["field"] == "body"


async def test_oversized_bodies_get_413(client: httpx.AsyncClient) -> None:
    service = bearer(token(Role.SERVICE))
    big = {"kind": "lead", "external_ref": "x" * 10_000}
    response = await client.post("/v1/subjects", json=big, headers=service)
    assert response.status_code == 413
    assert response.json()["error"] == "PayloadTooLargeError"


async def test_health_metrics_and_request_ids(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    response = await client.get("/v1/whoami", headers={"x-request-id": "req-12345678"})
    assert response.headers["x-request-id"] == "req-12345678"
    metrics = (await client.get("/metrics")).text
    assert 'route="/v1/whoami"' in metrics
    assert "factledger_http_request_duration_seconds_bucket" in metrics


async def test_parsing_errors_do_not_quote_the_input(client: httpx.AsyncClient) -> None:
    subject_id = await register(client, "crm-8")
    reviewer = bearer(token(Role.REVIEWER))
    url = f"/v1/subjects/{subject_id}/proposals/zzz-not-a-uuid/approve"
    response = await client.post(url, json={}, headers=reviewer)
    assert response.status_code == 422
    assert response.json()["field"] == "change_id"
    assert "`z`" not in response.text


async def test_oversized_streamed_bodies_get_413_too(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"kind": "lead", "external_ref": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'

    service = bearer(token(Role.SERVICE))
    headers = {**service, "content-type": "application/json"}
    response = await client.post("/v1/subjects", content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["error"] == "PayloadTooLargeError"
