"""Long requests end, and one tenant cannot hold what the others need, on `factledger serve`
over SQLite (the embedded default) and over PostgreSQL + pgvector:

- the event stream ends when its token does (nothing written later reaches it; the client
  resumes with a fresh token and `Last-Event-ID`), and one principal holds at most its cap of
  streams (429 with `Retry-After` beyond it, a slot back when one closes);
- a body that trickles or stalls is a 408 after its allowance (a streamed import, a chunked
  body, a body with a length);
- stalled imports of one tenant hold at most its share of the write slots: the next write of
  that tenant is a 429, another tenant's registration goes through; an import whose client
  leaves mid-body is logged as a client disconnect, never as an unexpected error.

No sleep races a timer: tokens carry their own short lifetimes, and every wait is for a
condition with a deadline.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import jwt
import pytest
from support.api_harness import bearer, token
from support.serve_process import postgres_serve_env, serving

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.http.auth import Role
from factledger.api.http.routes.event_stream import EXPIRY_COMMENT, HEARTBEAT

pytestmark = [pytest.mark.slow]

STREAM = "/v1/events/stream"
WAIT_S = 30.0
STREAM_CAP = 2
BODY_TIMEOUT_S = 1.0
STREAMS_AND_BODIES = {
    "FACTLEDGER_AUTH__LEEWAY_S": "0",  # a stream ends at the token's own `exp`
    "FACTLEDGER_API__EVENT_STREAM__POLL_S": "0.05",
    "FACTLEDGER_API__EVENT_STREAM__HEARTBEAT_S": "0.2",
    "FACTLEDGER_API__EVENT_STREAM__MAX_PER_PRINCIPAL": str(STREAM_CAP),
    "FACTLEDGER_API__BODY_TIMEOUT_S": str(BODY_TIMEOUT_S),
    "FACTLEDGER_API__BODY_MIN_BYTES_PER_S": "1024",
    "FACTLEDGER_API__RATE_LIMIT__ENABLED": "false",
}
WRITE_SLOTS = 4  # a tenant's share: 2
WRITE_SHARES = {
    "FACTLEDGER_API__MAX_CONCURRENT_WRITES": str(WRITE_SLOTS),
    "FACTLEDGER_API__TENANT_WRITE_SHARE": "0.5",
    "FACTLEDGER_API__WRITE_WAIT_S": "0.5",
    "FACTLEDGER_API__BODY_TIMEOUT_S": "600",  # the stalled imports outlast the test
    "FACTLEDGER_API__RATE_LIMIT__ENABLED": "false",
}


# One server per store and configuration for the whole module: starting one is the slow part.
@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store_env(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "sqlite":
        return {}
    location: PostgresLocation = request.getfixturevalue("postgres")
    return postgres_serve_env(location)


@pytest.fixture(scope="module")
def streams_server(
    store_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with serving(tmp_path_factory.mktemp("streams"), store_env | STREAMS_AND_BODIES) as url:
        yield url


@pytest.fixture(scope="module")
def shares_server(
    store_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("shares")
    with serving(folder, store_env | WRITE_SHARES) as url:
        yield url, folder


def until(check: Callable[[], bool], what: str, deadline_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def register(url: str, jwt_: str, ref: str) -> httpx.Response:
    body = {"kind": "lead", "external_ref": ref}
    return httpx.post(f"{url}/v1/subjects", json=body, headers=bearer(jwt_), timeout=WAIT_S)


def expiry_of(jwt_: str) -> float:
    return float(jwt.decode(jwt_, options={"verify_signature": False})["exp"])


# -- the stream ends with its token ------------------------------------------------------


def test_a_stream_ends_when_its_token_does_and_resumes_with_a_fresh_one(
    streams_server: str,
) -> None:
    url = streams_server
    fresh = token(Role.SERVICE, principal_id="follower")
    assert register(url, fresh, "before-expiry").status_code == 201
    short = token(Role.SERVICE, principal_id="follower", ttl=timedelta(seconds=8))
    ends_at = expiry_of(short)
    ids, comments = [], []
    with httpx.stream("GET", f"{url}{STREAM}", headers=bearer(short), timeout=WAIT_S) as response:
        assert response.status_code == 200
        for line in response.iter_lines():  # returns only when the server ends the stream
            if line.startswith("id:"):
                ids.append(line.removeprefix("id:").strip())  # an opaque cursor
            elif line.startswith(":"):
                comments.append(line.removeprefix(":").strip())
    closed_at = time.time()
    assert ids, "the event written before expiry was delivered"
    assert closed_at >= ends_at - 0.5  # not before the token ended (whole seconds on the wire)
    assert closed_at <= ends_at + WAIT_S / 2
    # The stream's last word is the expiry comment. A heartbeat may still follow it: the SSE
    # library's ping task can take the send lock between the generator's last chunk and the
    # response's end (a 0.2 s heartbeat here), and a client skips heartbeats anyway.
    assert [c for c in comments if c != HEARTBEAT][-1] == EXPIRY_COMMENT
    # Written after the token ended: the old token is refused, a fresh one resumes after the
    # last delivered id and gets it.
    assert register(url, fresh, "after-expiry").status_code == 201
    refused = httpx.get(f"{url}{STREAM}", headers=bearer(short), timeout=WAIT_S)
    assert refused.status_code == 401
    resumed = token(Role.SERVICE, principal_id="follower", ttl=timedelta(seconds=6))
    headers = bearer(resumed) | {"Last-Event-ID": ids[-1]}
    with httpx.stream("GET", f"{url}{STREAM}", headers=headers, timeout=WAIT_S) as response:
        later = [
            json.loads(line.removeprefix("data:"))
            for line in response.iter_lines()
            if line.startswith("data:")
        ]
    assert [e["type"] for e in later] == ["registered"]


def test_one_principal_holds_at_most_its_cap_of_streams(streams_server: str) -> None:
    url = streams_server
    mine = bearer(token(Role.ANALYST, principal_id="watcher"))
    with httpx.Client(base_url=url, timeout=WAIT_S) as http:
        held = [http.stream("GET", STREAM, headers=mine) for _ in range(STREAM_CAP)]
        opened = [stream.__enter__() for stream in held]
        assert [r.status_code for r in opened] == [200] * STREAM_CAP
        refused = http.get(STREAM, headers=mine)
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) > 0
        assert refused.json()["error"] == "RateLimitedError"
        other = bearer(token(Role.ANALYST, principal_id="someone-else"))
        with http.stream("GET", STREAM, headers=other) as theirs:
            assert theirs.status_code == 200
        held[0].__exit__(None, None, None)  # one closes: its slot comes back

        def reopened() -> bool:
            with http.stream("GET", STREAM, headers=mine) as again:
                return again.status_code == 200

        until(reopened, "a stream slot given back")
        held[1].__exit__(None, None, None)


def test_get_on_mcp_opens_no_stream(streams_server: str) -> None:
    agent = bearer(token(Role.AGENT, kind="lead", ref="mcp-1"))
    answer = httpx.get(f"{streams_server}/mcp", headers=agent, timeout=WAIT_S)
    assert (answer.status_code, answer.headers["Allow"]) == (405, "POST")


# -- bodies have a time allowance ----------------------------------------------------------


def raw_request(url: str, head: str, first: bytes) -> socket.socket:
    """A connection that sent `head` and `first`, then says nothing more."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=WAIT_S)
    sock.sendall(head.encode() + first)
    return sock


def status_of(sock: socket.socket) -> int:
    """The status line of the answer the server sends (waits for it, within the deadline)."""
    received = b""
    while b"\r\n" not in received:
        chunk = sock.recv(4096)
        if not chunk:
            break
        received += chunk
    return int(received.split(b" ", 2)[1])


def head(path: str, jwt_: str, *, tenant_length: str | None = None) -> str:
    framing = (
        f"Content-Length: {tenant_length}\r\n"
        if tenant_length is not None
        else "Transfer-Encoding: chunked\r\n"
    )
    return (
        f"POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {jwt_}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n"
    )


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@pytest.mark.parametrize(
    ("path", "framing"),
    [("/v1/import", "chunked"), ("/v1/subjects", "chunked"), ("/v1/subjects", "length")],
)
def test_a_stalled_body_is_a_408_after_its_allowance(
    streams_server: str, path: str, framing: str
) -> None:
    service = token(Role.SERVICE)
    partial = b'{"kind": "lead", "exte'
    began = time.monotonic()  # before the send: the server's allowance starts with the head
    if framing == "chunked":
        sock = raw_request(streams_server, head(path, service), chunk(partial))
    else:
        sock = raw_request(streams_server, head(path, service, tenant_length="200"), partial)
    with sock:
        assert status_of(sock) == 408
    assert time.monotonic() - began >= BODY_TIMEOUT_S * 0.9
    # The server goes on answering.
    assert register(streams_server, service, "after-a-stall").status_code == 201


# -- one tenant's slow writes leave the others theirs ----------------------------------------


def test_slow_imports_of_one_tenant_leave_other_tenants_their_writes(
    shares_server: tuple[str, Path],
) -> None:
    url, folder = shares_server
    hog = token(Role.SERVICE, tenant="t1", principal_id="importer")
    line = b'{"type": "subject", "kind": "lead", "ref": "slow-1"'  # never finished
    imports = [raw_request(url, head("/v1/import", hog), chunk(line)) for _ in range(6)]
    try:
        # Two hold the tenant's share; the other four wait for it, then hear 429.
        refused = 0
        for sock in imports[2:]:
            assert status_of(sock) == 429
            refused += 1
        assert refused == 4
        assert register(url, hog, "hog-more").status_code == 429
        for n in range(3):  # another tenant writes as if nothing happened
            created = register(url, token(Role.SERVICE, tenant="t2"), f"other-{n}")
            assert created.status_code == 201, created.text
    finally:
        for sock in imports:
            sock.close()  # the clients leave mid-body
    # Their slots come back once the server notices the clients left.
    until(lambda: register(url, hog, "hog-later").status_code == 201, "the tenant's slots back")
    logged = "".join(p.read_text() for p in folder.glob("serve-*.log"))
    until(lambda: "http.client_disconnected" in _log(folder), "the disconnects logged")
    assert "api.unexpected_error" not in logged


def _log(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.glob("serve-*.log"))
