"""The MCP tools over streamable HTTP at `/mcp`, in the API app.

- Stateless: every POST carries its own bearer token and is served on its own, so no MCP
  session outlives or outranks the token that opened it.
- Only POST: a stateless server has no stream to open on a GET (nor a session to DELETE), so
  any other method is a 405 naming POST in `Allow`, before anything else (the SDK would hold a
  GET open forever).
- The token is checked (with the API's rate limits) before the SDK sees the request, so a
  missing or bad one is the API's 401 body, whose `WWW-Authenticate` names the
  protected-resource metadata (`api.mcp.resource`); each tool call then reads the same header
  again to know its caller, since the SDK runs tools outside the request's task.
- The SDK's session manager has a lifespan of its own, run by a task of the app's lifespan.
- The SDK is loaded off the start-up path: importing it is a large part of a cold start of
  `factledger serve` (docs/benchmarks.md). The app's lifespan starts a task
  that imports it in a thread and then runs the session manager; the process answers
  (`/readyz` included) meanwhile. A served app imports it once its routes are in and the
  requests that waited for them are answered (ADR 0101), and what a first message needs has
  loaded (ADR 0190), unless a call to `/mcp` comes first: its caller waits for the SDK alone,
  which then loads at once (ADR 0248). A call to `/mcp` before the SDK is loaded waits for it,
  at most `LOAD_TIMEOUT_S`; if it could not be loaded, `/mcp` answers 503 and the API goes on.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import structlog
from fastapi import FastAPI
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.security.utils import get_authorization_scheme_param
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.bootstrap.warmup import request_path_settled
from factledger.api.http.app import create_app as create_http_app
from factledger.api.http.auth import Principal, TokenVerifier
from factledger.api.http.deferred_routes import DeferredRoutes
from factledger.api.http.deps import ApiState, get_principal
from factledger.api.http.errors import (
    ApiError,
    AuthenticationError,
    ServiceUnavailableError,
    error_body,
    render,
)
from factledger.api.mcp.resource import ProtectedResource
from factledger.api.settings import AuthSettings, RateLimitSettings, Settings

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

MCP_PATH = "/mcp"
LOAD_TIMEOUT_S = 30.0  # a call that arrives while the SDK loads waits this long at most
# What the loader imports in its thread: the SDK's HTTP transport and our server on it.
SDK_MODULES = ("mcp.server.streamable_http_manager", "factledger.api.mcp.server")
log = structlog.get_logger(__name__)


def create_app(
    settings: Settings | None = None,
    *,
    ports: Runtime | None = None,
    auth: AuthSettings | None = None,
    rate_limit: RateLimitSettings | None = None,
) -> FastAPI:
    """The HTTP API with the MCP tools at `/mcp` (what `factledger serve` runs)."""
    if settings is None:
        settings = Settings() if ports is None else Settings(auth=auth or AuthSettings())
    app = create_http_app(settings, ports=ports, auth=auth, rate_limit=rate_limit)
    mount_mcp(app, ProtectedResource.of(settings.api, auth or settings.auth))
    return app


def mount_mcp(app: FastAPI, resource: ProtectedResource) -> None:
    """Adds `/mcp` and its metadata to `app`. A served app whose routes load after ready
    (`api.http.deferred_routes`) loads the SDK after them too, and answers `/mcp` without
    waiting for them."""
    state: ApiState = app.state.api
    loader = _SdkLoader(state)
    endpoint = _McpEndpoint(state, loader, resource)
    # A Route, not a Mount: `/mcp` itself is the endpoint (a Mount would redirect to `/mcp/`).
    mcp_routes = [Route(MCP_PATH, endpoint, include_in_schema=False), *resource.routes(MCP_PATH)]
    app.router.routes.extend(mcp_routes)
    routes: DeferredRoutes | None = getattr(app.state, "routes", None)
    if routes is not None:
        routes.open_paths.update(route.path for route in mcp_routes)
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with outer(running) as inner:
            stop = asyncio.Event()
            after = None if routes is None else _after(routes)
            task = asyncio.create_task(loader.run(stop, after), name="mcp-sdk")
            try:
                yield inner
            finally:
                stop.set()
                await task

    app.router.lifespan_context = lifespan


def _after(routes: DeferredRoutes) -> Callable[[], Awaitable[None]]:
    """What a served app's SDK load waits for: its routes, then what a first message needs
    (the models and libraries loaded after ready): importing the SDK beside those made a
    first message wait 0.6 s longer (docs/benchmarks.md)."""

    async def settled() -> None:
        await routes.settled()
        await request_path_settled()

    return settled


class _SdkLoader:
    """Loads the SDK in a thread, then runs its session manager until the app stops; `manager`
    waits for it. The task that enters the manager's task group is the one that leaves it."""

    def __init__(self, state: ApiState) -> None:
        self._state = state
        self._loaded = asyncio.Event()
        self._wanted = asyncio.Event()  # a call to `/mcp` waits for the SDK
        self._manager: StreamableHTTPSessionManager | None = None

    async def run(
        self, stop: asyncio.Event, after: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Imports the SDK (once `after` returns, if given: it would otherwise share the
        interpreter's lock with the start and the routes' load; at once if a call to `/mcp`
        comes first, since its caller waits for nothing else) and runs its manager."""
        if after is not None and not await _before_stop(self._turn(after), stop):
            self._loaded.set()
            return
        try:
            await asyncio.to_thread(_import_sdk)
            manager = self._build()
        except Exception as exc:  # the API serves on without its MCP tools
            log.error("mcp.sdk_not_loaded", error_type=type(exc).__name__)
            self._loaded.set()
            return
        async with manager.run():
            self._manager = manager
            self._loaded.set()
            await stop.wait()
        self._manager = None

    def _build(self) -> StreamableHTTPSessionManager:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from factledger.api.mcp.server import build_server

        verifier = self._state.verifier
        server = build_server(self._state, lambda ctx: _bearer_principal(verifier, ctx))
        return StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)

    async def _turn(self, after: Callable[[], Awaitable[None]]) -> None:
        """Returns once `after` has returned, or once a call to `/mcp` waits for the SDK."""
        waited = asyncio.ensure_future(after())
        wanted = asyncio.ensure_future(self._wanted.wait())
        try:
            await asyncio.wait({waited, wanted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (waited, wanted):
                task.cancel()

    async def manager(self) -> StreamableHTTPSessionManager:
        self._wanted.set()
        try:
            await asyncio.wait_for(self._loaded.wait(), LOAD_TIMEOUT_S)
        except TimeoutError:
            raise ServiceUnavailableError("the MCP tools are still loading; retry") from None
        if self._manager is None:
            raise ServiceUnavailableError("the MCP tools are not available in this process")
        return self._manager


async def _before_stop(awaited: Awaitable[None], stop: asyncio.Event) -> bool:
    """Waits for `awaited` or `stop`; True if `awaited` came first."""
    waiting = asyncio.ensure_future(awaited)
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    for task in (waiting, stopping):
        task.cancel()
    return waiting.done() and not waiting.cancelled() and not stop.is_set()


def _import_sdk() -> None:
    for name in SDK_MODULES:
        importlib.import_module(name)


class _McpEndpoint:
    """An ASGI app: POST only, the API's authentication, then the SDK's transport."""

    def __init__(self, state: ApiState, loader: _SdkLoader, resource: ProtectedResource) -> None:
        self._state, self._loader, self._resource = state, loader, resource

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            await _not_allowed()(scope, receive, send)
            return
        scheme, token = get_authorization_scheme_param(request.headers.get("Authorization"))
        credentials = (
            HTTPAuthorizationCredentials(scheme=scheme, credentials=token) if token else None
        )
        try:
            await get_principal(request, self._state, credentials)
            manager = await self._loader.manager()
        except ApiError as exc:
            response = render(exc)
            if isinstance(exc, AuthenticationError):
                challenge = self._resource.challenge(request, MCP_PATH, token_given=bool(token))
                response.headers["WWW-Authenticate"] = challenge
            await response(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)


def _not_allowed() -> JSONResponse:
    detail = "this stateless server opens no event stream: POST each JSON-RPC message"
    return JSONResponse(
        error_body("MethodNotAllowed", detail), status_code=405, headers={"Allow": "POST"}
    )


def _bearer_principal(verifier: TokenVerifier, ctx: ServerRequestContext[Any, Any]) -> Principal:
    headers = getattr(ctx.request, "headers", None)
    raw = None if headers is None else headers.get("Authorization")
    scheme, token = get_authorization_scheme_param(raw)
    if scheme.lower() != "bearer" or not token:
        raise AuthenticationError("a bearer token is required")
    return verifier.verify(token)
