"""The FastAPI application factory.

`create_app(settings)` opens its runtime in the lifespan through `api.bootstrap`; tests pass a
ready-made `Runtime` with `create_app(ports=...)` (no `dependency_overrides`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.api.bootstrap.compose import open_runtime_patiently
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.bootstrap.warmup import FALLBACK_S
from factledger.api.http.auth import TokenVerifier
from factledger.api.http.body_deadline import BodyDeadlineMiddleware
from factledger.api.http.deferred_routes import DeferredRoutes, RoutesGate
from factledger.api.http.deps import ApiState
from factledger.api.http.errors import install_error_handlers
from factledger.api.http.metrics import ApiMetrics
from factledger.api.http.middleware import BodySizeLimitMiddleware, RequestContextMiddleware
from factledger.api.http.overload import WriteLimiter, io_executor
from factledger.api.http.paths import IMPORT_PATH
from factledger.api.http.rate_limit import RateLimiter
from factledger.api.http.read_routing import ReadRoutingMiddleware
from factledger.api.http.routes.health import after_ready
from factledger.api.http.routes.health import router as health_router
from factledger.api.http.schemas.common import error_schemas
from factledger.api.http.stream_leases import StreamLeases
from factledger.api.log_setup import configure_logging
from factledger.api.settings import AuthSettings, RateLimitSettings, Settings

DESCRIPTION = """\
Event-sourced memory for AI agents. Every request carries a bearer JWT issued by the platform;
its claims fix the tenant, the role and, for agent tokens, the one subject the call is about.
Agent tokens address their subject as `me`. Errors share one shape:
`{"error": "<Type>", "detail": "...", "field": "..."}`. Text holding a NUL or an unpaired
surrogate is refused (422, naming the field). Requests over a rate limit (per principal, per
tenant, or failed tokens per client address), writes beyond the tenant's share of the write
slots and event streams beyond a principal's cap get 429 with `Retry-After`. A body that does
not arrive within its time allowance is a 408; an event stream ends when its token expires.
"""


def create_app(
    settings: Settings | None = None,
    *,
    ports: Runtime | None = None,
    auth: AuthSettings | None = None,
    max_body_bytes: int | None = None,
    rate_limit: RateLimitSettings | None = None,
    routes_after_ready: bool = False,
) -> FastAPI:
    """Builds the app: with a ready `Runtime` as `ports` (tests) or from `settings` through
    `api.bootstrap`.

    `auth`, `max_body_bytes` and `rate_limit` override the settings' values (tests). With
    `routes_after_ready` (`factledger serve`), the app starts with its health routes only and
    loads the others once it is ready (`api.http.deferred_routes`); `app.state.routes` holds
    the parts still to load, to which the console adds its own.
    """
    if settings is None:
        settings = Settings() if ports is None else Settings(auth=auth or AuthSettings())
    if ports is None:
        configure_logging(json_lines=settings.log_json)
    metrics = ApiMetrics()
    limits = rate_limit or settings.api.rate_limit
    state = ApiState(
        verifier=TokenVerifier(auth or settings.auth),
        metrics=metrics,
        idempotency=InMemoryIdempotencyStore(),
        writes=WriteLimiter(
            limit=settings.api.max_concurrent_writes,
            wait_s=settings.api.write_wait_s,
            tenant_share=_tenant_share(settings.api.tenant_write_share, auth or settings.auth),
        ),
        ports=ports,  # set now: test transports may never run the lifespan
        limiter=RateLimiter(limits) if limits.enabled else None,
        event_stream=settings.api.event_stream,
        streams=StreamLeases(settings.api.event_stream.max_per_principal),
    )
    if state.limiter is not None and ports is not None:
        state.limiter.share(ports.rate_store)
    routes = DeferredRoutes() if routes_after_ready else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if ports is not None:
            yield
            return
        # The serving process's threads: writes hold at most their slots, reads get the rest.
        executor = io_executor(settings.api.max_concurrent_writes)
        asyncio.get_running_loop().set_default_executor(executor)
        # A served app warms up after its routes (`after_ready`), never beside their load.
        async with open_runtime_patiently(settings, warm_up_fallback=routes is None) as runtime:
            state.ports = runtime
            if state.limiter is not None:
                state.limiter.share(runtime.rate_store)
            # No probe may ask: the routes load a little later all the same, then the rest.
            later = None if routes is None else _AfterReadyLater(routes)
            yield
            if later is not None:
                later.cancel()
            if state.limiter is not None:
                state.limiter.share(None)
        state.ports = None

    app = FastAPI(
        title="factledger",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        # The service reports through its Prometheus metrics and structured logs; FastAPI's
        # OpenTelemetry hooks looked the global providers up (in the environment) on every
        # request, for nothing.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.api = state
    built_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = error_schemas(built_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    install_error_handlers(app)
    app.include_router(health_router)
    if routes is None:
        from factledger.api.http.route_set import include_api_routes

        include_api_routes(app)
    else:
        routes.add("the API's routes", lambda: _api_routes(app))
        app.state.routes = routes
    # Added last = outermost: the request context wraps the body limit and every handler.
    limit = max_body_bytes or settings.api.max_body_bytes
    # An import's body is streamed line by line, each line bounded by the import itself.
    # Innermost: a read's route to the standby is decided once the body limit let it in.
    app.add_middleware(
        ReadRoutingMiddleware, state=state, wait_s=settings.postgres.read_your_writes_wait_s
    )
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=limit, unlimited=(IMPORT_PATH,))
    # Outside the size limit, whose own read of a chunked body is timed too.
    app.add_middleware(
        BodyDeadlineMiddleware,
        timeout_s=settings.api.body_timeout_s,
        min_bytes_per_s=settings.api.body_min_bytes_per_s,
    )
    if routes is not None:
        # Inside the request context: a request that waited for the routes is logged and
        # timed whole.
        app.add_middleware(RoutesGate, routes=routes)
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    return app


def _api_routes(app: FastAPI) -> Callable[[], None]:
    """Imports the route set (the slow part, on the loader's thread); returns its inclusion."""
    from factledger.api.http.route_set import include_api_routes

    return lambda: include_api_routes(app)


def loop_later(delay_s: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
    return asyncio.get_running_loop().call_later(delay_s, callback)


class _AfterReadyLater:
    """`after_ready` in `FALLBACK_S`, for a process no probe asks; `cancel` stops it."""

    def __init__(self, routes: DeferredRoutes) -> None:
        self._task: asyncio.Task[None] | None = None
        self._timer = loop_later(FALLBACK_S, lambda: self._run(routes))

    def _run(self, routes: DeferredRoutes) -> None:
        self._task = asyncio.get_running_loop().create_task(after_ready(routes))

    def cancel(self) -> None:
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


def _tenant_share(share: float, auth: AuthSettings) -> float:
    """A deployment that serves one named tenant has no other tenant to keep slots for: its
    share would only halve its own concurrent writes."""
    return 1.0 if len(auth.tenants) == 1 else share
