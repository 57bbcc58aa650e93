"""The MCP server: lists the tools and runs a call as the HTTP API would run its route.

- The principal comes from the platform token alone, resolved per call by `PrincipalOf` (stdio:
  the token the process was started with; HTTP: the request's bearer header), and must be an
  agent's: its token fixes the one subject every tool acts on.
- A call's answer is the route's response model as JSON (text and structured content, which
  the tool's output schema describes); a failure is a tool error (`isError`) whose text is the
  API's error body, `{"error", "detail", "field"}`, with the status the API would have answered
  in `_meta` (`STATUS_META`). A failure carries no structured content: clients validate that
  against the output schema, which describes answers. Nothing else reaches the caller: an
  unexpected error is the API's generic 500 body, logged once with its type.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import structlog
from fastapi.exceptions import RequestValidationError
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp_types import Tool as McpTool
from pydantic import BaseModel, ValidationError

from factledger.api.http.auth import Principal, Role
from factledger.api.http.deps import ApiState
from factledger.api.http.errors import (
    InvalidParameterError,
    PermissionDeniedError,
    render,
    validation_body,
)
from factledger.api.mcp.tools import TOOLS, TOOLS_BY_NAME, Call, Tool

SERVER_NAME = "factledger"
# Where a failed call's result carries the HTTP status the API would have answered.
STATUS_META = "factledger/status"
UNKNOWN_TOOL = "(unknown)"
log = structlog.get_logger(__name__)

# Resolves the caller of one request; raises `AuthenticationError` for a missing or bad token.
PrincipalOf = Callable[[ServerRequestContext[Any, Any]], Principal]


def build_server(state: ApiState, principal_of: PrincipalOf) -> Server[Any]:
    """The MCP server over `state` (the HTTP app's, or the stdio process's own)."""
    listed = ListToolsResult(tools=[_described(tool) for tool in TOOLS])

    async def list_tools(
        _: ServerRequestContext[Any, Any], __: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return listed

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        arrived_at = time.monotonic()
        try:
            answer = await _run(state, principal_of(ctx), params, arrived_at)
        except Exception as exc:  # every failure becomes the API's error body
            return _failure(params.name, exc)
        body = answer.model_dump(mode="json", by_alias=True)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(body))], structured_content=body
        )

    return Server(
        SERVER_NAME,
        version=version("factledger"),
        instructions="Memory of the one subject this token is bound to. Call get_context at "
        "the start of a conversation and recall on a turn; record the conversation; propose "
        "profile changes, which the subject confirms or a reviewer approves.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _run(
    state: ApiState, principal: Principal, params: CallToolRequestParams, arrived_at: float
) -> BaseModel:
    if principal.role is not Role.AGENT:
        raise PermissionDeniedError("MCP tools need an agent token, bound to one subject")
    tool = TOOLS_BY_NAME.get(params.name)
    if tool is None:
        raise InvalidParameterError("name", "is not one of the tools")
    call = Call(principal, state, arrived_at)
    if not tool.writes:
        return await tool.run(call, params.arguments or {})
    async with state.writes.slot(principal.tenant):
        return await tool.run(call, params.arguments or {})


def _described(tool: Tool[Any]) -> McpTool:
    return McpTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.arguments.model_json_schema(),
        output_schema=tool.answer.model_json_schema(mode="serialization"),
        annotations=tool.annotations,
    )


def _failure(tool: str, exc: Exception) -> CallToolResult:
    if isinstance(exc, ValidationError):
        # The arguments are the body: locate errors as the HTTP API locates a body's.
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        body: dict[str, Any] = validation_body(RequestValidationError(errors))
        status = 422
    else:
        response = render(exc)  # logs an unexpected error once, with its type
        body, status = json.loads(bytes(response.body)), response.status_code
    # A name the caller made up is not repeated in the logs, whatever its length.
    named = tool if tool in TOOLS_BY_NAME else UNKNOWN_TOOL
    log.info("mcp.tool_failed", tool=named, error_type=type(exc).__name__, status=status)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))],
        is_error=True,
        _meta={STATUS_META: status},
    )
