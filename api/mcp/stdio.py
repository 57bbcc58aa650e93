"""The MCP tools over stdio, for an agent runtime that starts `factledger mcp` itself.

The token is read from `FACTLEDGER_MCP_TOKEN` and verified at start and again on every call
(so an expired token stops working), with the API's auth settings. It must be an agent token:
the subject it is bound to is the only one the tools act on. Stdout carries the protocol, so
logs go to stderr.
"""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.http.auth import Principal, Role, TokenVerifier
from factledger.api.http.deps import ApiState
from factledger.api.http.errors import AuthenticationError
from factledger.api.http.metrics import ApiMetrics
from factledger.api.http.overload import WriteLimiter
from factledger.api.mcp.server import build_server
from factledger.api.settings import Settings

TOKEN_ENV = "FACTLEDGER_MCP_TOKEN"  # noqa: S105 - the name of the variable, not a token
# One agent's process: its own short-term memory and idempotency store are enough.
MCP_STDIO = Needs(idempotency=False)


class TokenRefusedError(Exception):
    """The start-up token is missing, invalid or not an agent's; the message names why."""


def check_token(verifier: TokenVerifier, raw: str | None) -> Principal:
    if not raw:
        raise TokenRefusedError(f"{TOKEN_ENV} is not set: it must hold the agent's token")
    try:
        principal = verifier.verify(raw.strip())
    except AuthenticationError as exc:
        raise TokenRefusedError(f"{TOKEN_ENV} refused: {exc}") from None
    if principal.role is not Role.AGENT:
        needed = "an agent token, bound to a subject, is needed"
        raise TokenRefusedError(f"{TOKEN_ENV} refused: {needed}")
    return principal


async def serve_stdio(settings: Settings, token: str) -> None:
    verifier = TokenVerifier(settings.auth)
    async with open_runtime(settings, MCP_STDIO) as runtime:
        state = ApiState(
            verifier=verifier,
            metrics=ApiMetrics(),
            idempotency=InMemoryIdempotencyStore(),
            writes=WriteLimiter(
                limit=settings.api.max_concurrent_writes, wait_s=settings.api.write_wait_s
            ),
            ports=runtime,
        )
        server = build_server(state, lambda _: verifier.verify(token))
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run(settings: Settings, token: str) -> None:
    anyio.run(serve_stdio, settings, token)
