"""An approval of a request to forget whose key deletion fails after its event committed
(503): the client's retry with the same idempotency key replays the decision as seen and
deletes the keys; without a retry, the API process's pass over recorded forgets deletes
them. Either way the words go from the events the API serves."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

import httpx
import pytest
from e2e.test_api_forget_requests_said import ASKS, REVIEWER, STATED, asked_to_forget, ok
from support.api_harness import build_ports
from support.key_stores import DelegatingKeyStore

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.ports import KeyStore, KeyStoreUnavailableError
from factledger.testing.manual_clock import ManualClock


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 2, 9, 14, 0, tzinfo=UTC)))


class AwayWhenArmed(DelegatingKeyStore):
    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.armed = False

    def forget_many(self, scopes: Collection[str]) -> int:
        if self.armed:
            raise KeyStoreUnavailableError("key store away")
        return self.inner.forget_many(scopes)


async def _readable(http: httpx.AsyncClient, lead: str) -> str:
    """The subject's events as the API serves them (the ended sessions' lines among them)."""
    events = await ok(await http.get(f"/v1/subjects/{lead}/events?limit=500", headers=REVIEWER))
    return str(events)


async def _interrupted(http: httpx.AsyncClient, ports: Runtime) -> tuple[str, str, dict[str, str]]:
    lead, request = await asked_to_forget(http, ports)
    keys = AwayWhenArmed(ports.ledger.keys)
    ports.ledger.keys = keys
    url = f"/v1/subjects/{lead}/proposals/{request['change_id']}/approve"
    retry = {**REVIEWER, "Idempotency-Key": "approve-forget-budget"}
    keys.armed = True
    first = await http.post(url, json={}, headers=retry)
    assert first.status_code == 503, first.text
    keys.armed = False
    assert STATED in await _readable(http, lead)  # the event is in, the keys are not gone
    return lead, url, retry


def _assert_forgotten(readable: str) -> None:
    assert STATED not in readable
    assert ASKS not in readable
    assert "How is the evaluation going?" in readable  # the agent's line stays


async def test_the_clients_retry_with_the_same_key_deletes_the_keys(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, url, retry = await _interrupted(http, ports)
    decided = await ok(await http.post(url, json={}, headers=retry))
    assert decided["status"] == "confirmed"
    _assert_forgotten(await _readable(http, lead))


async def test_without_a_retry_the_pass_over_recorded_forgets_deletes_them(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    lead, _, _ = await _interrupted(http, ports)
    read, _ = ports.ledger.finish_forgetting()  # what every API process runs in the background
    assert read == 1
    _assert_forgotten(await _readable(http, lead))
