"""Over HTTP: a read whose views cannot catch up with the log. A full disk stops the views from
writing what is new, not from answering: the profile and the review queue are served from the
views as they stand, and the response says they are behind. A store that is away is still a 503.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, bearer, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.http.views_caught_up import VIEWS_BEHIND_HEADER
from factledger.application.errors import StorageFullError
from factledger.application.ledger.ports import ViewStoreUnavailableError

AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-behind"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER))
READS = {
    "profile": ("/v1/subjects/me/profile", AGENT),
    "queue": ("/v1/proposals/pending", REVIEWER),
}


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as client:
        body = {"kind": "lead", "external_ref": "crm-behind"}
        assert (await client.post("/v1/subjects", json=body, headers=SERVICE)).is_success
        ports.catch_up()  # the views know the subject before they fall behind
        yield client


def views_fail_with(ports: Runtime, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    def catch_up() -> int:
        raise error

    monkeypatch.setattr(ports.follower, "catch_up", catch_up)


@pytest.mark.parametrize("read", sorted(READS))
async def test_a_caught_up_read_says_nothing_about_its_views(
    http: httpx.AsyncClient, read: str
) -> None:
    url, headers = READS[read]
    response = await http.get(url, headers=headers)
    assert response.status_code == 200, response.text
    assert VIEWS_BEHIND_HEADER not in response.headers


@pytest.mark.parametrize("read", sorted(READS))
async def test_a_full_disk_serves_the_views_as_they_stand_and_says_so(
    http: httpx.AsyncClient, ports: Runtime, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    views_fail_with(ports, monkeypatch, StorageFullError("the disk is full"))
    url, headers = READS[read]
    response = await http.get(url, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers[VIEWS_BEHIND_HEADER] == "storage-full"


@pytest.mark.parametrize("read", sorted(READS))
async def test_views_that_are_away_are_a_503(
    http: httpx.AsyncClient, ports: Runtime, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    views_fail_with(ports, monkeypatch, ViewStoreUnavailableError("the views are away"))
    url, headers = READS[read]
    response = await http.get(url, headers=headers)
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "ViewStoreUnavailableError"
