"""Every route admits exactly the roles ADR 0010's table grants, and refuses the others with
403 before it looks at anything else (body, subject, session)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.testing.manual_clock import ManualClock

AGENT, SERVICE, REVIEWER, ANALYST, ADMIN = (
    Role.AGENT,
    Role.SERVICE,
    Role.REVIEWER,
    Role.ANALYST,
    Role.ADMIN,
)
EVERYONE = frozenset(Role)
# ADR 0010: an agent's work on its subject; a service may do what an agent may, on any subject.
AGENT_WORK = frozenset({AGENT, SERVICE, ADMIN})
# Subjects and single proposals: everyone but analysts (who see proposals only redacted).
SUBJECT_READERS = frozenset({AGENT, SERVICE, REVIEWER, ADMIN})
REVIEW = frozenset({REVIEWER, ADMIN})
S = "/v1/subjects/{subject}"
ROLES_BY_ROUTE: dict[tuple[str, str], frozenset[Role]] = {
    ("GET", "/v1/whoami"): EVERYONE,
    ("POST", "/v1/subjects"): frozenset({SERVICE, REVIEWER, ADMIN}),
    ("GET", "/v1/subjects/lookup"): frozenset({SERVICE, REVIEWER, ADMIN}),
    ("GET", S): SUBJECT_READERS,
    ("POST", f"{S}/sessions"): AGENT_WORK,
    ("POST", f"{S}/sessions/{{session_id}}/messages"): AGENT_WORK,
    ("GET", f"{S}/sessions/{{session_id}}"): AGENT_WORK,
    ("GET", f"{S}/sessions/{{session_id}}/messages"): AGENT_WORK,
    ("POST", f"{S}/sessions/{{session_id}}/end"): AGENT_WORK,
    ("POST", f"{S}/context"): AGENT_WORK,
    ("POST", f"{S}/recall"): AGENT_WORK,
    ("POST", f"{S}/proposals"): AGENT_WORK,
    ("GET", f"{S}/proposals/{{change_id}}"): SUBJECT_READERS,
    ("POST", f"{S}/proposals/{{change_id}}/confirm"): AGENT_WORK,
    ("POST", f"{S}/proposals/{{change_id}}/approve"): REVIEW,
    ("POST", f"{S}/proposals/{{change_id}}/reject"): REVIEW,
    ("POST", f"{S}/forget"): AGENT_WORK,
    ("POST", f"{S}/memories/{{memory_id}}/expire"): AGENT_WORK,
    # An expiry is a forget that waits and keeps history: the roles that may forget (not
    # reviewers, who decide on proposals only).
    ("POST", f"{S}/profile/fields/{{field}}/expire"): AGENT_WORK,
    ("DELETE", S): frozenset({ADMIN}),  # erasure (ADR 0015)
    ("GET", f"{S}/profile"): EVERYONE,
    ("GET", f"{S}/profile/versions/{{version}}"): EVERYONE,
    ("GET", f"{S}/profile/history"): EVERYONE,
    ("GET", f"{S}/profile/diff"): EVERYONE,
    ("GET", "/v1/proposals/pending"): REVIEW,
    ("GET", "/v1/proposals/pending/groups"): REVIEW,
    ("POST", "/v1/proposals/pending/decisions"): REVIEW,
    ("GET", f"{S}/events"): frozenset({ANALYST, REVIEWER, ADMIN}),
    ("GET", "/v1/dead-letters"): frozenset({SERVICE, ADMIN}),
    ("POST", "/v1/dead-letters/retry"): frozenset({SERVICE, ADMIN}),
    ("POST", "/v1/dead-letters/{item_id}/retry"): frozenset({SERVICE, ADMIN}),
    ("POST", "/v1/import"): frozenset({SERVICE, ADMIN}),  # history import (ADR 0021)
}
# Streams never end, so their roles are checked with a request that fails validation once
# admitted (an ASGI transport would wait for the whole body): 403 before it, 422 after it.
STREAM_ROLES: dict[tuple[str, str], frozenset[Role]] = {
    ("GET", "/v1/events/stream"): frozenset({ANALYST, SERVICE, ADMIN}),  # ADR 0022
}
TOKENS = {
    role: bearer(token(role, **({"kind": "lead", "ref": "crm-1"} if role is AGENT else {})))
    for role in Role
}


@pytest.fixture
async def http() -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        body = {"kind": "lead", "external_ref": "crm-1"}
        registered = await client.post("/v1/subjects", json=body, headers=TOKENS[SERVICE])
        yield client, registered.json()["subject_id"]


def test_the_table_covers_every_route_of_the_api() -> None:
    app = create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)
    routes = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/v1/")
        for method in operations
    }
    assert routes == set(ROLES_BY_ROUTE) | set(STREAM_ROLES)


def _url(path: str, role: Role, subject_id: str) -> str:
    return path.format(
        subject="me" if role is AGENT else subject_id,
        session_id="s-1",
        change_id="2f1e0c9a-3b4d-4e5f-8a6b-7c8d9e0f1a2b",
        version=0,
        item_id="1.0",
        memory_id="mem-1",
        field="supplier",
    )


@pytest.mark.parametrize("role", list(Role), ids=[r.value for r in Role])
@pytest.mark.parametrize(
    ("method", "path"), sorted(ROLES_BY_ROUTE), ids=[f"{m} {p}" for m, p in sorted(ROLES_BY_ROUTE)]
)
async def test_each_route_admits_exactly_the_roles_of_adr_0010(
    http: tuple[httpx.AsyncClient, str], method: str, path: str, role: Role
) -> None:
    client, subject_id = http
    url = _url(path, role, subject_id)
    body = {} if method == "POST" else None
    response = await client.request(method, url, json=body, headers=TOKENS[role])
    if role in ROLES_BY_ROUTE[(method, path)]:
        assert response.status_code != 403, response.text
    else:
        assert response.status_code == 403, response.text
        assert response.json()["detail"] == f"role {role.value} may not do this"


@pytest.mark.parametrize("role", list(Role), ids=[r.value for r in Role])
@pytest.mark.parametrize(("method", "path"), sorted(STREAM_ROLES))
async def test_each_stream_admits_exactly_its_roles(
    http: tuple[httpx.AsyncClient, str], method: str, path: str, role: Role
) -> None:
    client, _ = http
    response = await client.request(
        method, path, params={"type": "not-a-type"}, headers=TOKENS[role]
    )
    if role in STREAM_ROLES[(method, path)]:
        assert response.status_code == 422, response.text
    else:
        assert response.status_code == 403, response.text
