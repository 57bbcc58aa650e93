"""The client keeps the latest write position the service answered (`Factledger-Position`) and
sends it with every call, so a deployment whose reads go to standbys never answers this client
from a standby older than its own writes."""

from __future__ import annotations

import json

import httpx

from factledger.client import AsyncFactledgerClient, FactledgerClient

SUBJECT = {
    "subject_id": "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e",
    "kind": "lead",
    "external_ref": "x",
    "profile_version": 0,
}


class PositionedServer:
    """Answers the positions in `answers` in turn (None: no header), recording what it got."""

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = answers
        self.sent: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request.headers.get("factledger-position"))
        position = self.answers[len(self.sent) - 1]
        headers = {} if position is None else {"Factledger-Position": position}
        return httpx.Response(200, content=json.dumps(SUBJECT), headers=headers)


def test_the_latest_position_rides_on_every_later_call() -> None:
    # An older position answered late (another request) and a malformed one change nothing.
    server = PositionedServer(["0/16B3748", "1/0", None, "0/FFFFFFFF", "junk", None])
    with FactledgerClient("http://api", token="t", transport=httpx.MockTransport(server)) as client:
        for _ in range(6):
            client.get_subject()
        assert client.position == "1/0"
    assert server.sent == [None, "0/16B3748", "1/0", "1/0", "1/0", "1/0"]


async def test_the_async_client_does_the_same() -> None:
    server = PositionedServer(["A/10", None])
    async with AsyncFactledgerClient(
        "http://api", token="t", transport=httpx.MockTransport(server)
    ) as client:
        await client.get_subject()
        await client.get_subject()
    assert server.sent == [None, "A/10"]


def test_the_event_stream_connects_with_the_latest_position() -> None:
    event = {
        "cursor": "c1",
        "type": "registered",
        "subject_id": SUBJECT["subject_id"],
        "subject_kind": "lead",
        "version": 1,
        "timestamp": None,
        "content": False,
        "payload": {},
    }
    frame = f"id: c1\nevent: registered\ndata: {json.dumps(event)}\n\n".encode()
    sent: list[str | None] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("factledger-position"))
        if request.url.path.endswith("/stream"):
            return httpx.Response(200, content=frame, headers={"content-type": "text/event-stream"})
        return httpx.Response(
            201, content=json.dumps(SUBJECT), headers={"Factledger-Position": "2/AB"}
        )

    with FactledgerClient("http://api", token="t", transport=httpx.MockTransport(server)) as client:
        client.register_subject("lead", "x")
        assert next(iter(client.follow_events())).cursor == "c1"
    assert sent == [None, "2/AB"]
