"""The served app's routes, loaded once the process is ready; a request that needs them waits.

Importing the API's and the console's routes (FastAPI's analysis of every route, pydantic's
models of every body) was about a quarter of a start's CPU, and `/readyz` needs none of it.
`factledger serve` builds its app with only the health routes; the others are imported on a
thread once the first ready `/readyz` has been answered (or `FALLBACK_S` after the runtime
opened, if no probe asks), then added to the app on the event loop. Until then a request for
any other path waits for them (`RoutesGate`), however it came: it is answered as it would be
a moment later, never with a 404. Readiness keeps its meaning: the stores answer.

What else a process loads after ready (the models, some libraries, the MCP SDK: about 1.5 CPU
seconds of imports on threads) waits until the routes are in *and the requests that waited
for them have their answers* (`settled`): started beside the routes' load, those threads
held the interpreter's lock through it and through the first requests, which then took a
second or more after ready (ADR 0101). A load that fails answers the requests waiting for it
503, naming the part (`RoutesNotLoadedError`); the next request tries again.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from http import HTTPStatus

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.http.errors import RoutesNotLoadedError, render
from factledger.api.http.paths import HEALTH_PATHS, READY_PATH

log = structlog.get_logger(__name__)

# Imports a part of the route set (on a thread) and returns what adds it to the app (on the
# event loop, where requests read the app's routes).
Prepare = Callable[[], Callable[[], None]]


class DeferredRoutes:
    """The parts of an app's route set not loaded yet, their one load, and the requests that
    wait for it."""

    def __init__(self) -> None:
        self._parts: list[tuple[str, Prepare]] = []
        self._load: asyncio.Task[None] | None = None
        self._waiting = 0
        self._done_once = False  # a load has ended, installed or failed
        self._settled = asyncio.Event()
        self.installed = False
        # Paths the app serves without these routes (the MCP endpoint's): never held back.
        self.open_paths: set[str] = set()

    def add(self, name: str, prepare: Prepare) -> None:
        """`name` says what the part is in a failed load's answer ("the API's routes")."""
        self._parts.append((name, prepare))

    def start(self) -> None:
        """Starts the load on the running loop (once; again after a failed one)."""
        if self.installed or self._load is not None:
            return
        self._load = asyncio.get_running_loop().create_task(self._run(), name="api-routes")

    async def wait(self) -> None:
        """Starts the load if it has not started, and waits for it; raises
        `RoutesNotLoadedError` naming the part that failed."""
        self.start()
        load = self._load
        if load is None:  # installed meanwhile
            return
        try:
            await asyncio.shield(load)
        except RoutesNotLoadedError:
            if self._load is load:
                self._load = None  # the next request tries again
            raise

    async def settled(self) -> None:
        """Returns once the routes are in (or their load failed) and every request that
        waited for them has its answer's head: what loads after them may start."""
        await self._settled.wait()

    def waiter_arrived(self) -> None:
        self._waiting += 1

    def waiter_answered(self) -> None:
        self._waiting -= 1
        self._settle_if_done()

    def _settle_if_done(self) -> None:
        if self._waiting == 0 and self._done_once:
            self._settled.set()

    async def _run(self) -> None:
        try:
            try:
                installs = await asyncio.to_thread(self._prepare_all)
            except _PartFailedError as failed:
                log.error("api.routes_not_loaded", part=failed.name, error_type=failed.error_type)
                raise RoutesNotLoadedError(
                    f"{failed.name} could not be loaded ({failed.error_type}); retry"
                ) from failed.__cause__
            for install in installs:
                install()
            self.installed = True
        finally:
            # Done either way: the requests that waited are answered now, then what loads
            # after the routes may start (a failed load does not hold it back).
            self._done_once = True
            asyncio.get_running_loop().call_soon(self._settle_if_done)

    def _prepare_all(self) -> list[Callable[[], None]]:
        """Every part's import, with the cyclic collector paused: the routes are some
        tens of thousands of long-lived objects (as the start's own imports, which the
        console script imports paused, `api.cli.entry`), moved to the permanent generation
        once made so that no later full collection walks them."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            installs = []
            for name, prepare in self._parts:
                try:
                    installs.append(prepare())
                except Exception as exc:
                    raise _PartFailedError(name, type(exc).__name__) from exc
            return installs
        finally:
            gc.freeze()
            if enabled:
                gc.enable()


class _PartFailedError(Exception):
    def __init__(self, name: str, error_type: str) -> None:
        super().__init__(name)
        self.name, self.error_type = name, error_type


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
        elif path in HEALTH_PATHS or path in self.routes.open_paths:
            await self.app(scope, receive, send)
        else:
            await self._waiting(scope, receive, send)

    async def _waiting(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.routes.waiter_arrived()
        answered = False

        async def watched(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start" and not answered:
                answered = True
                self.routes.waiter_answered()
            await send(message)

        try:
            try:
                await self.routes.wait()
            except RoutesNotLoadedError as exc:
                if scope["type"] == "http":
                    await render(exc)(scope, receive, watched)
                return
            await self.app(scope, receive, watched)
        finally:
            if not answered:
                answered = True
                self.routes.waiter_answered()

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
