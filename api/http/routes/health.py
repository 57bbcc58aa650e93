"""Liveness, readiness and Prometheus metrics (unauthenticated, no tenant data)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.deps import StateDep
from factledger.projections.follower import max_position

router = APIRouter(tags=["operations"])
DEAD_LETTER_SCAN = 10_000


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Readiness: the ports are built and the memory backend answers",
    responses={503: {"description": "Not ready (still starting, or a dependency is down)."}},
)
async def readyz(state: StateDep) -> JSONResponse:
    if state.ports is None:
        return JSONResponse({"status": "starting"}, status_code=503)
    checks: dict[str, Any] = {"ledger": "ok"}
    backend = state.ports.backend
    if backend is not None:
        health = await backend.health()
        checks["memory"] = "ok" if health.ok else "degraded"
    # A degraded memory backend does not make the API unready: recall fails open by design.
    return JSONResponse({"status": "ready", "checks": checks})


async def _sync_figures(ports: Runtime | None) -> tuple[int | None, int | None]:
    """Sync lag (events not yet fed + items not yet written) and dead letters, when known."""
    if ports is None or ports.sync_store is None:
        return None, None
    store = ports.sync_store
    top = await asyncio.to_thread(max_position, ports.ledger)
    lag = max(0, top - await store.position()) + await store.pending_count()
    return lag, len(await store.dead_letters(limit=DEAD_LETTER_SCAN))


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(state: StateDep) -> Response:
    lag, dead = await _sync_figures(state.ports)
    body = state.metrics.render(sync_lag=lag, dead_letters=dead)
    return Response(body, media_type=state.metrics.content_type)
