"""The client's retries: 409 "in progress" and 503 are retried with the same key, the server's
`Retry-After` is honoured, and the client gives up after its documented total."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from factledger.client import (
    AsyncFactledgerClient,
    ConflictError,
    FactledgerClient,
    RetryPolicy,
    ServerUnavailableError,
    TransportFailedError,
)

SUBJECT = {
    "subject_id": "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e",
    "kind": "lead",
    "external_ref": "x",
    "profile_version": 0,
}
IN_PROGRESS = {"error": "RequestInProgressError", "detail": "retry later"}
UNAVAILABLE = {"error": "EventStoreUnavailableError", "detail": "a dependency is unavailable"}


class FlakyServer:
    """Answers `failures` times with `status` (and `Retry-After` when given), then 201."""

    def __init__(self, status: int, failures: int, retry_after: str | None = None) -> None:
        self.status, self.failures, self.retry_after = status, failures, retry_after
        self.keys: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("idempotency-key"))
        if len(self.keys) <= self.failures:
            body = IN_PROGRESS if self.status == 409 else UNAVAILABLE
            headers = {} if self.retry_after is None else {"Retry-After": self.retry_after}
            return httpx.Response(self.status, json=body, headers=headers)
        return httpx.Response(201, content=json.dumps(SUBJECT))


QUICK = RetryPolicy(backoff_s=0.001, max_backoff_s=0.002, total_s=5.0)


@pytest.mark.parametrize("status", [409, 503])
async def test_in_progress_and_unavailable_are_retried_with_the_same_key(status: int) -> None:
    server = FlakyServer(status, failures=4)
    transport = httpx.MockTransport(server)
    async with AsyncFactledgerClient("http://api", "t", transport=transport, retry=QUICK) as fl:
        subject = await fl.register_subject("lead", "x", idempotency_key="key-00000001")
    assert str(subject.subject_id) == SUBJECT["subject_id"]
    assert server.keys == ["key-00000001"] * 5


def test_the_blocking_client_retries_the_same_way() -> None:
    server = FlakyServer(409, failures=2, retry_after="0")
    with FactledgerClient(
        "http://api", "t", transport=httpx.MockTransport(server), retry=QUICK
    ) as fl:
        fl.register_subject("lead", "x", idempotency_key="key-00000002")
    assert server.keys == ["key-00000002"] * 3


def refused_by(server: FlakyServer, policy: RetryPolicy, error: type[Exception]) -> None:
    """The blocking client registers a subject against `server` until it gives up with
    `error`."""
    with (
        FactledgerClient(
            "http://api", "t", transport=httpx.MockTransport(server), retry=policy
        ) as fl,
        pytest.raises(error),
    ):
        fl.register_subject("lead", "x")


class FakeClock:
    """Time that passes only when the client waits: each try takes no time, so how many
    tries fit in the total depends on the waits alone, never on the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize(("status", "error"), [(409, ConflictError), (503, ServerUnavailableError)])
def test_it_gives_up_with_the_last_answer_once_its_total_has_passed(
    status: int, error: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(time, "monotonic", clock.monotonic)
    monkeypatch.setattr(time, "sleep", clock.sleep)
    # Binary fractions, so that the waits add up to the total exactly.
    server = FlakyServer(status, failures=10_000, retry_after="0.25")
    refused_by(server, RetryPolicy(attempts=1000, total_s=1.0), error)
    # Retry-After paced the tries (at 0, 0.25, 0.5, 0.75 and 1 s), not the thousand attempts.
    assert len(server.keys) == 5
    assert clock.now == 1.0


@pytest.mark.parametrize(("status", "error"), [(409, ConflictError), (503, ServerUnavailableError)])
async def test_the_async_client_gives_up_once_its_total_has_passed_too(
    status: int, error: type[Exception]
) -> None:
    server = FlakyServer(status, failures=10_000, retry_after="0.05")
    policy = RetryPolicy(attempts=1000, total_s=0.3)
    transport = httpx.MockTransport(server)
    async with AsyncFactledgerClient("http://api", "t", transport=transport, retry=policy) as fl:
        started = time.monotonic()
        with pytest.raises(error):
            await fl.register_subject("lead", "x")
    # On the event loop's own clock: the tries' count depends on how long each took on a
    # loaded machine (one try may outlast the total), never more than the pacing allows.
    assert 1 <= len(server.keys) <= 8
    assert time.monotonic() - started >= 0.3


def waits_until_refused(monkeypatch: pytest.MonkeyPatch, retry_after: str) -> list[float]:
    """The waits between tries against a server that always answers 503 with `retry_after`,
    under a policy of four tries in 2 s, until the client gives up."""
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # no time passes between the tries
    server = FlakyServer(503, failures=10_000, retry_after=retry_after)
    refused_by(server, RetryPolicy(attempts=4, total_s=2.0), ServerUnavailableError)
    return waits


def test_waits_honour_retry_after_and_never_pass_the_total(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the server's pace, then out of tries
    assert waits_until_refused(monkeypatch, "0.5") == [0.5, 0.5, 0.5]
    waits = waits_until_refused(monkeypatch, "5")
    # Each wait is cut short to what is left of the 2 s total.
    assert len(waits) == 3
    assert all(1.5 < wait <= 2.0 for wait in waits)


def test_the_backoff_doubles_with_jitter_up_to_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    policy = RetryPolicy(attempts=6, backoff_s=0.2, max_backoff_s=1.0, total_s=60.0)
    with (
        FactledgerClient(
            "http://api",
            "t",
            transport=httpx.MockTransport(FlakyServer(502, failures=10)),
            retry=policy,
        ) as fl,
        pytest.raises(ServerUnavailableError),
    ):
        fl.register_subject("lead", "x")
    fulls = [0.2, 0.4, 0.8, 1.0, 1.0]
    assert len(waits) == len(fulls)
    for wait, full in zip(waits, fulls, strict=True):
        assert full / 2 <= wait <= full


def test_a_transport_error_that_outlasts_the_tries_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time, "sleep", lambda _: None)
    calls = 0

    def unreachable(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("refused", request=request)

    with (
        FactledgerClient(
            "http://api",
            "t",
            transport=httpx.MockTransport(unreachable),
            retry=RetryPolicy(attempts=3),
        ) as fl,
        pytest.raises(TransportFailedError, match="ConnectError"),
    ):
        fl.register_subject("lead", "x")
    assert calls == 3


def test_the_default_total_outlasts_the_servers_idempotency_lease() -> None:
    from factledger.application.ledger.idempotency import DEFAULT_LEASE_S

    assert RetryPolicy().total_s > 2 * DEFAULT_LEASE_S
