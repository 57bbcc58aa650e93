"""`ReadRoutingMiddleware` on its own: which requests may read the standby, which position
they wait for, and where a write's position goes (header; for the console, also a cookie)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
from starlette.types import Receive, Scope, Send

from factledger.adapters.read_routing import standby_allowed
from factledger.api.http.metrics import ApiMetrics
from factledger.api.http.read_routing import POSITION_COOKIE, ReadRoutingMiddleware

WRITTEN = "0/3000060"


class FakeReplay:
    """The primary is at `WRITTEN`; the standby has replayed up to `replayed` or not answered."""

    def __init__(self, *, answers: bool = True) -> None:
        self.answers = answers
        self.asked: list[str | None] = []

    async def primary_position(self) -> str:
        return WRITTEN

    async def standby_reached(self, position: str | None, *, wait_s: float) -> bool:
        self.asked.append(position)
        return self.answers and position in (None, "0/1000000")


async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    status = 303 if scope["path"].startswith("/console") and scope["method"] == "POST" else 200
    body = b"standby" if standby_allowed() else b"primary"
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": body})


def client(replay: FakeReplay) -> httpx.AsyncClient:
    state: Any = SimpleNamespace(ports=SimpleNamespace(replay=replay), metrics=ApiMetrics())
    app = ReadRoutingMiddleware(endpoint, state=state, wait_s=0.1)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


async def test_reads_go_to_a_standby_that_reached_the_callers_position() -> None:
    replay = FakeReplay()
    async with client(replay) as http:
        assert (await http.get("/v1/subjects/me/profile")).text == "standby"
        behind = {"Factledger-Position": WRITTEN}
        assert (await http.get("/v1/subjects/me/profile", headers=behind)).text == "primary"
        reached = {"Factledger-Position": "0/1000000"}
        assert (await http.post("/v1/subjects/me/recall", headers=reached)).text == "standby"
        assert (await http.get("/metrics")).text == "primary"  # the service's own: unrouted
    assert replay.asked == [None, WRITTEN, "0/1000000"]


async def test_a_standby_that_does_not_answer_leaves_reads_on_the_primary() -> None:
    async with client(FakeReplay(answers=False)) as http:
        assert (await http.get("/v1/subjects/me/profile")).text == "primary"


async def test_writes_read_the_primary_and_carry_their_position() -> None:
    async with client(FakeReplay()) as http:
        written = await http.post("/v1/subjects", json={})
        assert written.text == "primary"
        assert written.headers["factledger-position"] == WRITTEN
        assert "set-cookie" not in written.headers


async def test_the_console_carries_the_position_from_a_form_to_the_next_page() -> None:
    replay = FakeReplay()
    async with client(replay) as http:
        approved = await http.post("/console/subjects/s/approve")
        assert approved.status_code == 303
        assert approved.cookies[POSITION_COOKIE] == WRITTEN
        page = await http.get("/console/queue", headers={"Cookie": f"{POSITION_COOKIE}={WRITTEN}"})
        assert page.text == "primary"  # the standby had not replayed the approval
        # The API's routes ignore the console's cookie: their callers send the header.
        await http.get(
            "/v1/subjects/me/profile", headers={"Cookie": f"{POSITION_COOKIE}={WRITTEN}"}
        )
    assert replay.asked == [WRITTEN, None]
