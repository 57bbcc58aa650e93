"""Rate limits: a principal or a tenant over its burst gets 429 with `Retry-After` while others
go on; an address that sent too many bad tokens is refused before its tokens are checked;
health endpoints are never limited. (There were no limits: 400 forged tokens in 5.7 s.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import RateLimitSettings, Settings

# Refills so slow that no token comes back during a test.
LIMITS = RateLimitSettings(
    principal_per_s=0.001,
    principal_burst=5,
    tenant_per_s=0.001,
    tenant_burst=8,
    failed_auth_per_s=0.001,
    failed_auth_burst=3,
)
FORGED = {"Authorization": "Bearer " + token(Role.SERVICE).rsplit(".", 1)[0] + ".forged"}
Client = Callable[[str], httpx.AsyncClient]


@pytest.fixture
async def client(ports: Runtime) -> AsyncIterator[Client]:
    """Clients of one app, each from the client address it is given."""
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=LIMITS)
    opened: list[httpx.AsyncClient] = []

    def at(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        opened.append(httpx.AsyncClient(transport=transport, base_url="http://api"))
        return opened[-1]

    yield at
    for made in opened:
        await made.aclose()


def service(principal: str, tenant: str = "t1") -> dict[str, str]:
    return bearer(token(Role.SERVICE, principal_id=principal, tenant=tenant))


async def statuses(http: httpx.AsyncClient, headers: dict[str, str], count: int) -> list[int]:
    return [(await http.get("/v1/whoami", headers=headers)).status_code for _ in range(count)]


def assert_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["error"] == "RateLimitedError"
    assert int(response.headers["Retry-After"]) >= 1


async def test_a_principal_over_its_burst_is_429_while_another_goes_on(client: Client) -> None:
    http = client("10.0.0.1")
    assert await statuses(http, service("svc-a"), 5) == [200] * 5
    assert_limited(await http.get("/v1/whoami", headers=service("svc-a")))
    assert await statuses(http, service("svc-b"), 3) == [200] * 3


async def test_a_tenant_over_its_burst_is_429_while_another_tenant_goes_on(
    client: Client,
) -> None:
    http = client("10.0.0.1")
    answered = [
        *await statuses(http, service("svc-a"), 4),
        *await statuses(http, service("svc-b"), 4),
    ]
    assert answered == [200] * 8
    assert_limited(await http.get("/v1/whoami", headers=service("svc-c")))
    assert await statuses(http, service("svc-a", tenant="t2"), 3) == [200] * 3


async def test_a_limited_request_never_reaches_the_ledger(client: Client, ports: Runtime) -> None:
    http = client("10.0.0.1")
    await statuses(http, service("svc-a"), 5)
    body = {"kind": "lead", "external_ref": "crm-9"}
    assert_limited(await http.post("/v1/subjects", json=body, headers=service("svc-a")))
    subject_id = ports.ledger.subject_id_for("t1", "lead", "crm-9")
    assert not list(ports.ledger.events.get(subject_id))


async def test_an_address_sending_forged_tokens_is_refused_before_they_are_checked(
    client: Client,
) -> None:
    attacker, neighbour = client("203.0.113.7"), client("198.51.100.2")
    assert await statuses(attacker, FORGED, 3) == [401] * 3
    assert_limited(await attacker.get("/v1/whoami", headers=FORGED))
    assert_limited(await attacker.get("/v1/whoami"))  # no token at all counts alike
    # Even a valid token waits: the address is refused before any token is looked at.
    assert_limited(await attacker.get("/v1/whoami", headers=service("svc-a")))
    assert await statuses(neighbour, FORGED, 1) == [401]
    assert await statuses(neighbour, service("svc-a"), 1) == [200]


async def test_health_endpoints_are_never_limited(client: Client) -> None:
    http = client("203.0.113.7")
    await statuses(http, FORGED, 4)
    await statuses(http, service("svc-a"), 6)
    for path in ("/healthz", "/readyz", "/metrics"):
        for _ in range(20):
            assert (await http.get(path)).status_code == 200, path


def test_limits_are_on_by_default_the_embedded_dev_server_included() -> None:
    limits = Settings().api.rate_limit
    assert limits.enabled
    assert limits.store == "shared"
    assert limits.role_rate("service").burst < limits.tenant_burst


async def test_limits_switched_off_never_answer_429(ports: Runtime) -> None:
    off = LIMITS.model_copy(update={"enabled": False})
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=off)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        assert await statuses(http, FORGED, 10) == [401] * 10
        assert await statuses(http, service("svc-a"), 10) == [200] * 10
