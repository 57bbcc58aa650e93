"""The MCP tools over streamable HTTP at `/mcp`, in the API app.

- Stateless: every POST carries its own bearer token and is served on its own, so no MCP
  session outlives or outranks the token that opened it.
- The token is checked (with the API's rate limits) before the SDK sees the request, so a
  missing or bad one is the API's 401 body; each tool call then reads the same header again to
  know its caller, since the SDK runs tools outside the request's task.
- The SDK's session manager has a lifespan of its own; `mount_mcp` nests it in the app's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.security.utils import get_authorization_scheme_param
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app as create_http_app
from factledger.api.http.auth import Principal, TokenVerifier
from factledger.api.http.deps import ApiState, get_principal
from factledger.api.http.errors import ApiError, AuthenticationError, render
from factledger.api.mcp.server import build_server
from factledger.api.settings import AuthSettings, RateLimitSettings, Settings

MCP_PATH = "/mcp"


def create_app(
    settings: Settings | None = None,
    *,
    ports: Runtime | None = None,
    auth: AuthSettings | None = None,
    rate_limit: RateLimitSettings | None = None,
) -> FastAPI:
    """The HTTP API with the MCP tools at `/mcp` (what `factledger serve` runs)."""
    app = create_http_app(settings, ports=ports, auth=auth, rate_limit=rate_limit)
    mount_mcp(app)
    return app


def mount_mcp(app: FastAPI) -> None:
    state: ApiState = app.state.api
    server = build_server(state, lambda ctx: _bearer_principal(state.verifier, ctx))
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
    # A Route, not a Mount: `/mcp` itself is the endpoint (a Mount would redirect to `/mcp/`).
    app.router.routes.append(Route(MCP_PATH, _McpEndpoint(state, manager), include_in_schema=False))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with outer(running) as inner, manager.run():
            yield inner

    app.router.lifespan_context = lifespan


class _McpEndpoint:
    """An ASGI app: the API's authentication, then the SDK's transport."""

    def __init__(self, state: ApiState, manager: StreamableHTTPSessionManager) -> None:
        self._state, self._manager = state, manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        scheme, token = get_authorization_scheme_param(request.headers.get("Authorization"))
        credentials = (
            HTTPAuthorizationCredentials(scheme=scheme, credentials=token) if token else None
        )
        try:
            await get_principal(request, self._state, credentials)
        except ApiError as exc:
            await render(exc)(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)


def _bearer_principal(verifier: TokenVerifier, ctx: ServerRequestContext[Any, Any]) -> Principal:
    headers = getattr(ctx.request, "headers", None)
    raw = None if headers is None else headers.get("Authorization")
    scheme, token = get_authorization_scheme_param(raw)
    if scheme.lower() != "bearer" or not token:
        raise AuthenticationError("a bearer token is required")
    return verifier.verify(token)
