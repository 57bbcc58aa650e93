"""A local Supermemory v5 server: the endpoints our adapter uses, validated against the spec.

Usage (in-process, for the contract suite):

    server = SupermemoryServer(extractor, embedder)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app), base_url=BASE)

or on loopback under uvicorn, for latency and fault tests and the benchmark:

    server = SupermemoryServer(extractor, embedder, latency=LatencyProfile.observed())
    with serve_on_loopback(server.app) as base_url: ...

- Every request needs `Authorization: Bearer <api_key>` (401 otherwise).
- Bodies, path and query parameters are checked against the v5 OpenAPI spec: unknown fields and
  wrong types are 400 in the spec's validation-error shape.
- Errors are `{"error": ...}` with the documented status codes; every success is 200 + JSON,
  checked against the spec's response schema unless `check_responses=False`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from factledger.application.memory.ports import Embedder, Extractor
from factledger.testing.supermemory import queries as queries
from factledger.testing.supermemory.engine import (
    EngineConflictError,
    EngineInvalidError,
    EngineNotFoundError,
    ProcessingTiming,
    SupermemoryEngine,
)
from factledger.testing.supermemory.faults import FaultPlan, LatencyProfile, LatencySampler
from factledger.testing.supermemory.filters import FilterDepthError, check_depth
from factledger.testing.supermemory.model import iso
from factledger.testing.supermemory.spec import SpecValidationError, operation, response_issues

JsonObject = dict[str, Any]
Handler = Callable[[dict[str, str], dict[str, Any], Any], Awaitable[JsonObject]]
DEFAULT_API_KEY = "sm-local-test-key"


class SupermemoryServer:
    """The ASGI app (`.app`) over a `SupermemoryEngine` (`.engine`), with fault injection."""

    def __init__(
        self,
        extractor: Extractor,
        embedder: Embedder,
        *,
        api_key: str = DEFAULT_API_KEY,
        timing: ProcessingTiming | None = None,
        latency: LatencyProfile | None = None,
        faults: FaultPlan | None = None,
        seed: int = 0,
        check_responses: bool = True,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api_key = api_key
        self.engine = SupermemoryEngine(
            extractor, embedder, timing=timing, seed=seed, monotonic=monotonic
        )
        self.latency = LatencySampler(latency) if latency else None
        self.faults = faults or FaultPlan(seed=seed)
        self.requests: list[str] = []  # operation names, in arrival order
        # Every 200 is checked against the spec's response schema; a mismatch is a 500 and is
        # kept here, so a test run proves the server never answers off-spec.
        self.check_responses = check_responses
        self.response_issues: list[tuple[str, list[JsonObject]]] = []
        self.app = Starlette(routes=self._routes())

    def _routes(self) -> list[Route]:
        e = self.engine
        table: list[tuple[str, str, str, Handler]] = [
            (
                "add",
                "post",
                "/ns/{namespace}/document",
                lambda p, q, b: _value(e.add(p["namespace"], b)),
            ),
            (
                "documents.delete",
                "delete",
                "/ns/{namespace}/document",
                lambda p, q, b: _value(e.delete_documents(p["namespace"], b["ids"])),
            ),
            (
                "documents.get",
                "get",
                "/ns/{namespace}/document/{id}",
                lambda p, q, b: _value(
                    queries.get_document(e, p["namespace"], p["id"], q.get("include", []))
                ),
            ),
            (
                "documents.update",
                "patch",
                "/ns/{namespace}/document/{id}",
                lambda p, q, b: _value(e.update(p["namespace"], p["id"], b)),
            ),
            ("search", "post", "/ns/{namespace}/search", self._search),
            (
                "list",
                "post",
                "/ns/{namespace}/list/{type}",
                lambda p, q, b: _value(
                    queries.list_items(e, p["namespace"], p["type"], q, _checked_filter(b or {}))
                ),
            ),
            (
                "memories.forget",
                "delete",
                "/ns/{namespace}/memories",
                lambda p, q, b: _value(e.forget(p["namespace"], b["ids"])),
            ),
            (
                "memories.get",
                "get",
                "/ns/{namespace}/memories/{id}",
                lambda p, q, b: _value(
                    queries.memory_details(
                        e, p["namespace"], p["id"], q.get("include", []), q.get("relatedLimit", 10)
                    )
                ),
            ),
            (
                "namespaces.delete",
                "delete",
                "/ns/{namespace}",
                lambda p, q, b: _value(e.delete_namespace(p["namespace"], q.get("moveTo"))),
            ),
            ("namespaces.list", "get", "/ns", self._namespaces),
        ]
        return [
            Route(path, self._endpoint(name, method, path, handler), methods=[method.upper()])
            for name, method, path, handler in table
        ]

    async def _search(self, p: dict[str, str], q: dict[str, Any], body: Any) -> JsonObject:
        started = time.perf_counter()
        results = await queries.search(self.engine, p["namespace"], _checked_filter(body))
        return {"results": results, "searchTime": round((time.perf_counter() - started) * 1000, 3)}

    async def _namespaces(self, p: dict[str, str], q: dict[str, Any], body: Any) -> JsonObject:
        names = sorted(n for n in self.engine.namespaces if q.get("q", "") in n)
        page, limit = int(q.get("page", 1)), int(q.get("limit", 10))
        window = names[(page - 1) * limit : page * limit]
        items = []
        for name in window:
            state = self.engine.namespaces[name]
            stamp = iso(state.created_at)
            items.append(
                {
                    "id": f"ns_{name}",
                    "namespace": name,
                    "description": None,
                    "documentCount": len(state.documents),
                    "memoryCount": len(state.current_memories()),
                    "system": {"createdAt": stamp, "updatedAt": stamp},
                }
            )
        pages = max(1, -(-len(names) // limit))
        return {
            "namespaces": items,
            "pagination": {
                "currentPage": page,
                "limit": limit,
                "totalItems": len(names),
                "totalPages": pages,
            },
        }

    def _endpoint(
        self, name: str, method: str, path: str, handler: Handler
    ) -> Callable[[Request], Awaitable[Response]]:
        spec = operation(method, path)

        async def endpoint(request: Request) -> Response:
            self.requests.append(name)
            if request.headers.get("authorization") != f"Bearer {self.api_key}":
                return JSONResponse({"error": "Unauthorized"}, status_code=401)
            if self.latency is not None and not await _pause(self.latency.delay(name)):
                return _shutting_down()
            fault = self.faults.next_fault(name)
            if fault is not None:
                if not await _pause(fault.stall_s):
                    return _shutting_down()
                if fault.status is not None:
                    status, error_body, headers = fault.response()
                    return JSONResponse(error_body, status_code=status, headers=headers)
            try:
                raw = await request.body()
            except ClientDisconnect:
                # The client gave up during a simulated stall: nobody reads an answer.
                return Response(status_code=499)
            try:
                body = json.loads(raw) if raw else None
                query = spec.validate(
                    dict(request.path_params), request.query_params.multi_items(), body
                )
            except json.JSONDecodeError:
                return _invalid([{"message": "Malformed JSON body", "path": ["body"]}])
            except SpecValidationError as exc:
                return JSONResponse(exc.response_body(), status_code=400)
            try:
                async with self.engine.lock:
                    await self.engine.advance()
                    result = await handler(dict(request.path_params), query, body)
            except FilterDepthError as exc:
                return _invalid([{"message": str(exc), "path": ["filter"]}])
            except EngineNotFoundError as exc:
                return JSONResponse({"error": f"{exc.what} not found"}, status_code=404)
            except EngineInvalidError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            except EngineConflictError as exc:
                return JSONResponse({"error": str(exc)}, status_code=409)
            # A namespace move is queued: the spec answers it 202, a deletion 200.
            status = 202 if name == "namespaces.delete" and result["status"] == "queued" else 200
            if self.check_responses:
                issues = response_issues(method, path, status, result)
                if issues:
                    self.response_issues.append((name, issues))
                    return JSONResponse({"error": "response off spec"}, status_code=500)
            return JSONResponse(result, status_code=status)

        return endpoint


async def _pause(seconds: float) -> bool:
    """Sleeps; False when the server cancels the request while shutting down."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        # uvicorn cancels stalled requests at shutdown; answering ends them without a
        # traceback per stalled request in the logs (the client is long gone).
        return False
    return True


def _shutting_down() -> JSONResponse:
    return JSONResponse({"error": "Service unavailable"}, status_code=503)


async def _value(result: JsonObject) -> JsonObject:
    return result


def _checked_filter(body: JsonObject) -> JsonObject:
    if body.get("filter") is not None:
        check_depth(body["filter"])
    return body


def _invalid(issues: list[JsonObject]) -> JSONResponse:
    return JSONResponse({"success": False, "error": issues}, status_code=400)


@contextmanager
def serve_on_loopback(app: Any, *, graceful_shutdown_s: int = 1) -> Iterator[str]:
    """Runs `app` under uvicorn on a free 127.0.0.1 port in a thread; yields its base URL."""
    # uvicorn binds the port itself (port 0): handing it a pre-bound socket made every request
    # on loopback an order of magnitude slower.
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=graceful_shutdown_s,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10.0
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("local Supermemory server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=graceful_shutdown_s + 5.0)
