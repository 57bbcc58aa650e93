"""The API's resource routes (all but the health routes): importing this module builds them
(FastAPI analyses each route's parameters and models where it is declared), which is a large
part of a start's CPU; `include_api_routes` adds them to an app."""

from __future__ import annotations

from fastapi import FastAPI

from factledger.api.http.deps import WRITE_SLOT
from factledger.api.http.routes.dead_letters import router as dead_letters_router
from factledger.api.http.routes.erasure import router as erasure_router
from factledger.api.http.routes.event_stream import router as event_stream_router
from factledger.api.http.routes.events import router as events_router
from factledger.api.http.routes.expiry import router as expiry_router
from factledger.api.http.routes.forget import router as forget_router
from factledger.api.http.routes.importing import router as import_router
from factledger.api.http.routes.profile import router as profile_router
from factledger.api.http.routes.proposals import router as proposals_router
from factledger.api.http.routes.queue import router as queue_router
from factledger.api.http.routes.recall import router as recall_router
from factledger.api.http.routes.sessions import router as sessions_router
from factledger.api.http.routes.subjects import router as subjects_router


def include_api_routes(app: FastAPI) -> None:
    app.include_router(recall_router)  # never waits for a write slot
    app.include_router(event_stream_router)  # a read that lasts: never holds a write slot
    for router in (
        subjects_router,
        sessions_router,
        proposals_router,
        forget_router,
        erasure_router,
        expiry_router,
        profile_router,
        queue_router,
        events_router,
        dead_letters_router,
        import_router,
    ):
        app.include_router(router, dependencies=[WRITE_SLOT])
