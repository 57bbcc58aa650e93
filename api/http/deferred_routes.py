"""The served app's routes, loaded once the process is ready; a request that needs them waits.

Importing the API's and the console's routes (FastAPI's analysis of every route, pydantic's
models of every body) was about a quarter of a start's CPU, and `/readyz` needs none of it.
`factledger serve` builds its app with only the health routes; the others are imported on a
thread once the first ready `/readyz` has been answered (or `FALLBACK_S` after the runtime
opened, if no probe asks), then added to the app on the event loop. Until then a request for
any other path waits for them (`RoutesGate`), however it came: it is answered as it would be
a moment later, never with a 404. Readiness keeps its meaning: the stores answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.http.paths import HEALTH_PATHS, READY_PATH

log = structlog.get_logger(__name__)

# Imports a part of the route set (on a thread) and returns what adds it to the app (on the
# event loop, where requests read the app's routes).
Prepare = Callable[[], Callable[[], None]]


class DeferredRoutes:
    """The parts of an app's route set not loaded yet, and their one load."""

    def __init__(self) -> None:
        self._parts: list[Prepare] = []
        self._load: asyncio.Task[None] | None = None
        self.installed = False

    def add(self, prepare: Prepare) -> None:
        self._parts.append(prepare)

    def start(self) -> None:
        """Starts the load on the running loop (once; again after a failed one)."""
        if self.installed or self._load is not None:
            return
        self._load = asyncio.get_running_loop().create_task(self._run(), name="api-routes")

    async def wait(self) -> None:
        """Starts the load if it has not started, and waits for it; raises its error."""
        self.start()
        load = self._load
        if load is None:  # installed meanwhile
            return
        try:
            await asyncio.shield(load)
        except Exception:
            if self._load is load:
                self._load = None  # the next request tries again
            raise

    async def _run(self) -> None:
        try:
            installs = await asyncio.to_thread(lambda: [prepare() for prepare in self._parts])
        except Exception as exc:
            log.error("api.routes_not_loaded", error_type=type(exc).__name__)
            raise
        for install in installs:
            install()
        self.installed = True


class RoutesGate:
    """Lets the health routes through at once; every other request waits for the routes. The
    first ready `/readyz` starts their load once its answer has been sent."""

    def __init__(self, app: ASGIApp, *, routes: DeferredRoutes) -> None:
        self.app, self.routes = app, routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.routes.installed or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path == READY_PATH:
            await self._readiness(scope, receive, send)
        elif path in HEALTH_PATHS:
            await self.app(scope, receive, send)
        else:
            await self.routes.wait()
            await self.app(scope, receive, send)

    async def _readiness(self, scope: Scope, receive: Receive, send: Send) -> None:
        ready = False

        async def watched(message: Message) -> None:
            nonlocal ready
            if message["type"] == "http.response.start":
                ready = message["status"] == HTTPStatus.OK
            await send(message)

        await self.app(scope, receive, watched)
        if ready:
            self.routes.start()
