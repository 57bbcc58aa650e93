"""Liveness, readiness and Prometheus metrics (unauthenticated, no tenant data)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from factledger.api.deps import StateDep

router = APIRouter(tags=["operations"])


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
    backend = getattr(state.ports, "memory", None) or getattr(state.ports, "backend", None)
    if backend is not None:
        health = await backend.health()
        checks["memory"] = "ok" if health.ok else "degraded"
    # A degraded memory backend does not make the API unready: recall fails open by design.
    return JSONResponse({"status": "ready", "checks": checks})


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(state: StateDep) -> Response:
    body = await state.metrics.render()
    return Response(body, media_type=state.metrics.content_type)
