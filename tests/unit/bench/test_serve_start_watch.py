"""After a first served request, the start bench keeps asking for a while and reports the
slowest answer: a load after ready that holds the interpreter's lock shows there."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from factledger.bench import serve_start
from factledger.bench.serve_start import Start, _watch, watched_summary


def test_the_watch_reports_the_slowest_answer_and_how_many_it_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(serve_start, "WATCH_EVERY_S", 0.01)
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers["Authorization"])
        if len(asked) == 3:
            time.sleep(0.15)  # the one answer held up behind a load
        return httpx.Response(200, json={"kind": "service"})

    with httpx.Client(transport=httpx.MockTransport(answer), base_url="http://api") as client:
        slowest, watched = _watch(client, {"Authorization": "Bearer t"}, 0.4)

    assert slowest is not None
    assert slowest >= 0.15
    assert watched == len(asked) >= 4
    assert set(asked) == {"Bearer t"}


def test_no_watch_asks_nothing() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("asked")

    with httpx.Client(transport=httpx.MockTransport(refuse), base_url="http://api") as client:
        assert _watch(client, {}, 0.0) == (None, 0)


def test_a_refused_answer_in_the_watch_fails_the_start() -> None:
    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503)

    with (
        httpx.Client(transport=httpx.MockTransport(busy), base_url="http://api") as client,
        pytest.raises(httpx.HTTPStatusError),
    ):
        _watch(client, {}, 0.1)


def test_the_summary_gives_every_start_and_the_median_after_the_first() -> None:
    starts = [
        Start(2.0, 1.0, slowest_watched_s=1.3, watched=150),  # the first fills the graph cache
        Start(1.0, 0.8, slowest_watched_s=0.2, watched=190),
        Start(1.0, 0.8, slowest_watched_s=0.25, watched=188),
    ]
    assert watched_summary(starts) == (
        "1300, 200, 250 ms (median after the first 225 ms; 188 answers a start)"
    )
    assert watched_summary([Start(1.0, None)]) == "-"


class _Server:
    """A fake API: it registers one subject and takes a session; once the session has ended,
    the next `GET /v1/whoami` waits `STALL_S` (the sync's first build, holding the lock)."""

    STALL_S = 0.2

    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[tuple[str, str, object]] = []
        self.refuse = refuse
        self.stalls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        self.calls.append((request.method, request.url.path, json.loads(body) if body else None))
        if request.url.path == self.refuse:
            return httpx.Response(403, json={"error": "Forbidden"})
        if request.url.path == "/v1/whoami":
            if any(path.endswith("/end") for _, path, _ in self.calls) and not self.stalls:
                self.stalls += 1
                time.sleep(self.STALL_S)
            return httpx.Response(200, json={"kind": "service"})
        if request.url.path == "/v1/subjects":
            return httpx.Response(201, json={"subject_id": "s-1"})
        return httpx.Response(201, json={})


def _client(server: _Server) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(server), base_url="http://api")


def test_the_watchs_session_is_recorded_and_the_slowest_answer_from_it_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(serve_start, "WATCH_EVERY_S", 0.01)
    server = _Server()
    served = serve_start.Served({}, "t", watch_s=0.6, session_at_s=0.1)

    with _client(server) as client:
        start = serve_start._served(
            client, served, time.perf_counter(), Start(1.0, 0.5), lambda: _client(server)
        )

    sent = [(method, path) for method, path, _ in server.calls if path != "/v1/whoami"]
    assert sent == [
        ("POST", "/v1/subjects"),
        ("POST", "/v1/subjects/s-1/sessions"),
        *[("POST", "/v1/subjects/s-1/sessions/s1/messages")] * 3,
        ("POST", "/v1/subjects/s-1/sessions/s1/end"),
    ]
    lines = [body for _, path, body in server.calls if path.endswith("/messages")]
    assert all(isinstance(line, dict) and line["role"] == "subject" for line in lines)
    assert start.slowest_from_session_s is not None
    assert start.slowest_from_session_s >= _Server.STALL_S
    assert start.slowest_watched_s == start.slowest_from_session_s
    assert start.session_s is not None


def test_a_refused_session_fails_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve_start, "WATCH_EVERY_S", 0.01)
    server = _Server(refuse="/v1/subjects/s-1/sessions/s1/end")
    served = serve_start.Served({}, "t", watch_s=0.2, session_at_s=0.0)

    with _client(server) as client, pytest.raises(RuntimeError, match="session failed"):
        serve_start._served(
            client, served, time.perf_counter(), Start(1.0, 0.5), lambda: _client(server)
        )


def test_no_session_is_recorded_without_one_asked() -> None:
    server = _Server()
    served = serve_start.Served({}, "t", watch_s=0.05)

    with _client(server) as client:
        start = serve_start._served(client, served, time.perf_counter(), Start(1.0, 0.5))

    assert {path for _, path, _ in server.calls} == {"/v1/whoami"}
    assert (start.slowest_from_session_s, start.session_s) == (None, None)


def test_the_session_summary_gives_every_start_and_the_median_after_the_first() -> None:
    starts = [
        Start(2.0, 1.0, slowest_from_session_s=0.03, session_s=0.3),
        Start(1.0, 0.8, slowest_from_session_s=0.6, session_s=0.1),
        Start(1.0, 0.8, slowest_from_session_s=0.5, session_s=0.12),
    ]

    assert serve_start.session_summary(starts) == (
        "30, 600, 500 ms (median after the first 550 ms); the session's requests took 120 ms "
        "(median)"
    )
    assert serve_start.session_summary([Start(1.0, None)]) == "-"
