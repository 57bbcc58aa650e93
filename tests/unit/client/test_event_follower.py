"""The client's event follower: SSE framing, and a dropped stream resumed from the last event
it yielded (`Last-Event-ID`), so nothing is skipped and nothing repeats."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from factledger.client import FactledgerClient, PermissionDeniedError, RetryPolicy
from factledger.client.events import SseParser

SUBJECT = "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e"
FAST = RetryPolicy(attempts=3, backoff_s=0.0)


def frame(position: int) -> bytes:
    body = {
        "position": position,
        "type": "registered",
        "subject_id": SUBJECT,
        "subject_kind": "lead",
        "version": 1,
        "timestamp": None,
        "content": False,
        "payload": {},
    }
    return f"id: {position}\nevent: registered\ndata: {json.dumps(body)}\n\n".encode()


def client_on(handler: Callable[[httpx.Request], httpx.Response]) -> FactledgerClient:
    return FactledgerClient("http://api", "jwt", retry=FAST, transport=httpx.MockTransport(handler))


def test_the_parser_joins_data_lines_and_skips_comments() -> None:
    parser = SseParser()
    lines = [": heartbeat", "", "id: 7", "event: x", "data: {", 'data: "a": 1}', "", ""]
    assert [d for line in lines if (d := parser.feed(line)) is not None] == ['{\n"a": 1}']


def test_a_dropped_stream_resumes_after_the_last_event_yielded() -> None:
    asked: list[str | None] = []

    def dropped_after(positions: list[int]) -> Iterator[bytes]:
        yield from (frame(p) for p in positions)
        raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        resume = request.headers.get("Last-Event-ID")
        asked.append(resume)
        if resume is None:
            return httpx.Response(200, content=dropped_after([1, 2]))
        if asked.count("2") == 1:
            return httpx.Response(503)  # a restart: try again later
        return httpx.Response(200, content=dropped_after([3, 4]))

    client = client_on(handler)
    follower = client.follow_events()
    seen: list[int] = []
    for event in follower:
        seen.append(event.position)
        if len(seen) == 4:
            break
    assert seen == [1, 2, 3, 4]
    assert follower.position == 4
    assert asked == [None, "2", "2"]


def test_a_refusal_is_raised_not_retried() -> None:
    calls = 0

    def handler(_: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        body = {"error": "PermissionDeniedError", "detail": "role agent may not do this"}
        return httpx.Response(403, json=body)

    client = client_on(handler)
    with pytest.raises(PermissionDeniedError):
        next(iter(client.follow_events(after=5)))
    assert calls == 1
