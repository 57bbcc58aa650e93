"""The FastAPI application factory.

`create_app(settings)` builds its ports in the lifespan through `api.bootstrap`; tests pass
ready-made ports with `create_app(ports=...)` (no `dependency_overrides`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI

from factledger.api.auth import AuthSettings, TokenVerifier
from factledger.api.deps import ApiState
from factledger.api.errors import install_error_handlers
from factledger.api.idempotency import InMemoryIdempotencyStore
from factledger.api.metrics import ApiMetrics
from factledger.api.middleware import BodySizeLimitMiddleware, RequestContextMiddleware
from factledger.api.routes_dead_letters import router as dead_letters_router
from factledger.api.routes_events import router as events_router
from factledger.api.routes_forget import router as forget_router
from factledger.api.routes_health import router as health_router
from factledger.api.routes_profile import queue_router
from factledger.api.routes_profile import router as profile_router
from factledger.api.routes_proposals import router as proposals_router
from factledger.api.routes_recall import router as recall_router
from factledger.api.routes_sessions import router as sessions_router
from factledger.api.routes_subjects import router as subjects_router

DEFAULT_MAX_BODY_BYTES = 256 * 1024
PortsFactory = Callable[[], AbstractAsyncContextManager[Any]]

DESCRIPTION = """\
Event-sourced memory for AI agents. Every request carries a bearer JWT issued by the platform;
its claims fix the tenant, the role and, for agent tokens, the one subject the call is about.
Agent tokens address their subject as `me`. Errors share one shape:
`{"error": "<Type>", "detail": "...", "field": "..."}`.
"""


def create_app(
    settings: Any | None = None,
    *,
    ports: Any | None = None,
    auth: AuthSettings | None = None,
    ports_factory: PortsFactory | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> FastAPI:
    """Builds the app. Either `ports` (ready-made, tests) or a factory that opens them."""
    metrics = ApiMetrics()
    state = ApiState(
        verifier=TokenVerifier(auth or AuthSettings()),
        metrics=metrics,
        idempotency=InMemoryIdempotencyStore(),
        ports=ports,  # set now: test transports may never run the lifespan
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if ports is not None:
            yield
            return
        if ports_factory is None:
            raise RuntimeError("create_app needs ports or a ports factory")
        async with ports_factory() as built:
            state.ports = built
            yield
        state.ports = None

    app = FastAPI(
        title="factledger",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.api = state
    install_error_handlers(app)
    app.include_router(health_router)
    for router in (
        subjects_router,
        sessions_router,
        recall_router,
        proposals_router,
        forget_router,
        profile_router,
        queue_router,
        events_router,
        dead_letters_router,
    ):
        app.include_router(router)
    # Added last = outermost: the request context wraps the body limit and every handler.
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=max_body_bytes)
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    return app
