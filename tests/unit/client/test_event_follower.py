"""The client's event follower: SSE framing, a dropped stream resumed from the last event it
yielded (`Last-Event-ID`), so nothing is skipped and nothing repeats, and the server's `retry:`
honoured as the wait before reconnecting."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from factledger.client import (
    AsyncFactledgerClient,
    FactledgerClient,
    PermissionDeniedError,
    RetryPolicy,
    TransportFailedError,
)

SUBJECT = "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e"
FAST = RetryPolicy(attempts=3, backoff_s=0.0)


def frame(position: int) -> bytes:
    body = {
        "cursor": f"c{position}",
        "type": "registered",
        "subject_id": SUBJECT,
        "subject_kind": "lead",
        "version": 1,
        "timestamp": None,
        "content": False,
        "payload": {},
    }
    return f"id: c{position}\nevent: registered\ndata: {json.dumps(body)}\n\n".encode()


STREAM = {"content-type": "text/event-stream"}


def stream(content: bytes | Iterator[bytes] | AsyncIterator[bytes]) -> httpx.Response:
    return httpx.Response(200, content=content, headers=STREAM)


def client_on(handler: Callable[[httpx.Request], httpx.Response]) -> FactledgerClient:
    return FactledgerClient("http://api", "jwt", retry=FAST, transport=httpx.MockTransport(handler))


def test_data_lines_are_joined_and_comments_skipped() -> None:
    body = json.loads(frame(7).decode().split("data: ")[1])
    halves = json.dumps(body).split(", ", 1)
    split = f": heartbeat\n\nid: c7\nevent: x\ndata: {halves[0]},\ndata: {halves[1]}\n\n"
    client = client_on(lambda _: stream(split.encode()))
    assert next(iter(client.follow_events())).cursor == "c7"


def test_the_servers_retry_field_paces_the_reconnects(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    asked: list[str | None] = []

    def dropped_after(head: bytes, position: int) -> Iterator[bytes]:
        yield head + frame(position)
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers.get("Last-Event-ID"))
        if len(asked) == 1:
            return stream(dropped_after(b"retry: 1500\n\n", 1))
        if len(asked) == 2:
            return httpx.Response(503)
        return stream(dropped_after(b"", 2))

    seen = []
    for event in client_on(handler).follow_events():
        seen.append(event.cursor)
        if len(seen) == 2:
            break
    assert seen == ["c1", "c2"]
    assert asked == [None, "c1", "c1"]
    # After the drop, and after the 503: the server's 1.5 s each time, not the policy's 0 s.
    assert waits == [1.5, 1.5]


def test_without_a_retry_field_the_policy_backoff_paces_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    policy = RetryPolicy(attempts=4, backoff_s=0.4, max_backoff_s=10.0)
    client = FactledgerClient(
        "http://api",
        "jwt",
        retry=policy,
        transport=httpx.MockTransport(lambda _: httpx.Response(503)),
    )
    with pytest.raises(TransportFailedError):
        next(iter(client.follow_events()))
    # Three waits between four tries, each between half and all of 0.4 s, 0.8 s, 1.6 s.
    assert len(waits) == 3
    for wait, full in zip(waits, [0.4, 0.8, 1.6], strict=True):
        assert full / 2 <= wait <= full


def test_a_dropped_stream_resumes_after_the_last_event_yielded() -> None:
    asked: list[str | None] = []

    def dropped_after(positions: list[int]) -> Iterator[bytes]:
        yield from (frame(p) for p in positions)
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        resume = request.headers.get("Last-Event-ID")
        asked.append(resume)
        if resume is None:
            return stream(dropped_after([1, 2]))
        if asked.count("c2") == 1:
            return httpx.Response(503)  # a restart: try again later
        return stream(dropped_after([3, 4]))

    client = client_on(handler)
    follower = client.follow_events()
    seen: list[str] = []
    for event in follower:
        seen.append(event.cursor)
        if len(seen) == 4:
            break
    assert seen == ["c1", "c2", "c3", "c4"]
    assert follower.cursor == "c4"
    assert asked == [None, "c2", "c2"]


def test_a_refusal_is_raised_not_retried() -> None:
    calls = 0

    def handler(_: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = {"error": "PermissionDeniedError", "detail": "role agent may not do this"}
        return httpx.Response(403, json=body)

    client = client_on(handler)
    with pytest.raises(PermissionDeniedError):
        next(iter(client.follow_events(after="c5")))
    assert calls == 1


async def test_the_async_follower_resumes_and_reads_the_retry_field() -> None:
    asked: list[str | None] = []

    async def dropped_after(head: bytes, position: int) -> AsyncIterator[bytes]:
        yield head + frame(position)
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers.get("Last-Event-ID"))
        if len(asked) == 2:
            return httpx.Response(503)
        return stream(dropped_after(b"retry: 0\n\n", len(asked) // 2 + 1))

    transport = httpx.MockTransport(handler)
    # A wait of the policy's (500 s at least) would outlast the test's timeout.
    policy = RetryPolicy(attempts=3, backoff_s=1000.0, max_backoff_s=1000.0)
    async with AsyncFactledgerClient("http://api", "jwt", retry=policy, transport=transport) as fl:
        follower = fl.follow_events()
        seen = []
        async for event in follower:
            seen.append(event.cursor)
            if len(seen) == 2:
                break
    assert seen == ["c1", "c2"]
    assert asked == [None, "c1", "c1"]
