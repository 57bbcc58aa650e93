"""The gate in front of routes loaded after ready (`api.http.deferred_routes`), on a bare ASGI
app: a failed load answers the requests that waited 503 naming the part, and the next request
loads again; what loads after the routes waits until the requests that waited for them have
their answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import httpx
from starlette.types import Receive, Scope, Send

from factledger.api.http.deferred_routes import DeferredRoutes, RoutesGate

EVENTS: list[str] = []


async def answering(scope: Scope, receive: Receive, send: Send) -> None:
    EVENTS.append(f"answered {scope['path']}")
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"routed"})


def client(routes: DeferredRoutes) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=RoutesGate(answering, routes=routes))
    return httpx.AsyncClient(transport=transport, base_url="http://api")


def failing_once() -> Callable[[], Callable[[], None]]:
    calls: list[int] = []

    def prepare() -> Callable[[], None]:
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("a module of the part is missing")
        return lambda: None

    return prepare


async def test_a_failed_load_answers_503_naming_the_part_and_the_next_request_loads() -> None:
    routes = DeferredRoutes()
    routes.add("the API's routes", failing_once())
    async with client(routes) as http:
        failed = await http.get("/v1/whoami")
        assert failed.status_code == 503
        assert failed.json()["error"] == "RoutesNotLoadedError"
        detail = "the API's routes could not be loaded (ImportError); retry"
        assert failed.json()["detail"] == detail
        assert failed.headers["Retry-After"] == "1"
        assert not routes.installed
        again = await http.get("/v1/whoami")
    assert (again.status_code, again.text) == (200, "routed")
    assert routes.installed


async def test_what_loads_after_the_routes_waits_for_the_requests_that_waited() -> None:
    release = threading.Event()

    def slow() -> Callable[[], None]:
        release.wait(5)
        return lambda: None

    routes = DeferredRoutes()
    routes.add("the console", slow)
    EVENTS.clear()

    async def after_the_routes() -> None:
        await routes.settled()
        EVENTS.append("settled")

    async with client(routes) as http:
        waiting = asyncio.create_task(http.get("/console/queue"))
        settled = asyncio.create_task(after_the_routes())
        await asyncio.sleep(0.05)
        assert not settled.done()  # the load has not even ended
        release.set()
        await asyncio.wait_for(settled, 5)
        assert (await waiting).text == "routed"
    assert EVENTS == ["answered /console/queue", "settled"]
