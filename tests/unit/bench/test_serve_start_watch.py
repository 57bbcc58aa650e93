"""After a first served request, the start bench keeps asking for a while and reports the
slowest answer: a load after ready that holds the interpreter's lock shows there."""

from __future__ import annotations

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
