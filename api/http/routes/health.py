"""Liveness, readiness and Prometheus metrics (unauthenticated, no tenant data)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from functools import partial
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from starlette.background import BackgroundTask

from factledger.adapters.deferred_load import failing_loads
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.bootstrap.warmup import start_after_ready_async
from factledger.api.http.deferred_routes import DeferredRoutes
from factledger.api.http.deps import StateDep
from factledger.api.http.errors import STORE_RETRY_AFTER_S
from factledger.api.http.readiness import Check, Readiness, readiness, store_checks
from factledger.application.errors import ApplicationError
from factledger.application.memory.compaction import CompactionStatus, ReportsCompaction
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.ports import MemoryBackend
from factledger.projections.follower import max_position

router = APIRouter(tags=["operations"])
DEAD_LETTER_SCAN = 10_000
COMPACTION_READ_S = 1.0
MEMORY = "memory"


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness: every store answers; the memory backend's state is reported",
    responses={
        503: {"description": "Not ready: still starting, or a store is down (`failing` names it)."}
    },
)
async def readyz(state: StateDep, request: Request) -> JSONResponse:
    if state.ports is None:
        return JSONResponse({"status": "starting"}, status_code=503)
    checks: dict[str, Check] = store_checks(state.ports)
    backend = state.ports.backend
    if backend is not None:
        checks[MEMORY] = partial(_memory_healthy, backend)
    # The stores and the memory backend are asked side by side, under one deadline.
    states = (await readiness(checks)).checks
    memory = states.pop(MEMORY, None)
    stores = Readiness(states)
    body: dict[str, Any] = dict(states)
    if memory is not None:
        body[MEMORY] = "ok" if memory == "ok" else "degraded"
    # A degraded memory backend does not make the API unready: recall fails open by design,
    # and writes never need it (the sync keeps their items until the backend is back).
    if not stores.ready:
        answer = {"status": "not_ready", "failing": stores.failing, "checks": body}
        retry = {"Retry-After": str(STORE_RETRY_AFTER_S)}
        return JSONResponse(answer, status_code=503, headers=retry)
    # Ready: what the start left for later (the routes, then the models and some libraries)
    # begins once this answer is sent, so that it never holds up the answer itself.
    warm = BackgroundTask(_warm_up, request.app)
    return JSONResponse({"status": "ready", "checks": body}, background=warm)


async def _warm_up(app: FastAPI) -> None:
    await after_ready(getattr(app.state, "routes", None))


async def after_ready(routes: DeferredRoutes | None) -> None:
    """The routes first, when they are still to load, and the models and libraries once the
    routes are in and the requests that waited for them are answered: loaded beside them,
    they held the interpreter's lock through the routes' load and those requests (ADR 0101)."""
    if routes is not None:
        routes.start()
        await routes.settled()
    await start_after_ready_async()


class MemoryDegradedError(Exception):
    """The memory backend answered its health check, and not `ok`."""


async def _memory_healthy(backend: MemoryBackend) -> None:
    if not (await backend.health()).ok:
        raise MemoryDegradedError(backend.name)


async def _sync_figures(ports: Runtime | None) -> tuple[int | None, int | None]:
    """Sync lag (events not yet fed + items not yet written) and dead letters, when known."""
    if ports is None or ports.sync_store is None:
        return None, None
    store = ports.sync_store
    top = await asyncio.to_thread(max_position, ports.ledger)
    lag = max(0, top - await store.position()) + await store.pending_count()
    return lag, len(await store.dead_letters(limit=DEAD_LETTER_SCAN))


async def _projection_lag(ports: Runtime | None) -> dict[str, int] | None:
    """How far each projection's views are behind the log (None when the ledger is away)."""
    if ports is None:
        return None
    try:
        return await asyncio.to_thread(ports.follower.lag)
    except Exception:  # a scrape reports what it can; the store checks say what is down
        return None


async def _compaction(ports: Runtime | None) -> CompactionStatus | None:
    """The backend's erasure compaction record, where it keeps one (pgvector)."""
    backend = None if ports is None or ports.backend is None else innermost_backend(ports.backend)
    if not isinstance(backend, ReportsCompaction):
        return None
    try:
        async with asyncio.timeout(COMPACTION_READ_S):
            return await backend.compaction_status()
    except (ApplicationError, TimeoutError):  # a scrape reports what it can
        return None


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(state: StateDep) -> Response:
    lag, dead = await _sync_figures(state.ports)
    projections = await _projection_lag(state.ports)
    body = state.metrics.render(
        sync_lag=lag,
        dead_letters=dead,
        projection_lag=projections,
        compaction=await _compaction(state.ports),
        now=datetime.now(UTC),
        models_failing=failing_loads(),
    )
    return Response(body, media_type=state.metrics.content_type)
