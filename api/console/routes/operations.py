"""Operations (admins): the sync's dead letters with their error types, retry, and sync lag.

Reads and retries through the sync store as the API's dead-letter routes do, filtered to the
admin's tenant; lag is the figure `/metrics` reports (events not yet fed + items pending),
deployment-wide, as it carries no tenant data.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from factledger.api.console.guard import CSRF, Administering, ConsoleDep
from factledger.api.console.pages import render_page, see_other
from factledger.api.http.routes.dead_letters import ITEM_ID, SyncStoreDep
from factledger.application.errors import NotFoundError
from factledger.projections.follower import max_position

router = APIRouter(prefix="/operations")
DEAD_LETTERS_SHOWN = 200


@router.get("", response_class=HTMLResponse)
async def operations(
    request: Request, session: Administering, console: ConsoleDep, store: SyncStoreDep
) -> HTMLResponse:
    ledger = console.api.require_ports().ledger
    head = await asyncio.to_thread(max_position, ledger)
    fed = await store.position()
    pending = await store.pending_count()
    letters = await store.dead_letters(tenant=session.tenant, limit=DEAD_LETTERS_SHOWN)
    return render_page(
        request,
        "operations.html",
        session,
        letters=letters,
        head=head,
        unfed=max(0, head - fed),
        pending=pending,
    )


@router.post("/dead-letters/retry", dependencies=[CSRF])
async def retry_all(session: Administering, store: SyncStoreDep) -> RedirectResponse:
    await store.retry_dead(tenant=session.tenant)
    return see_other("/console/operations", "retried")


@router.post("/dead-letters/{item_id}/retry", dependencies=[CSRF])
async def retry_one(
    item_id: Annotated[str, Path(pattern=ITEM_ID)], session: Administering, store: SyncStoreDep
) -> RedirectResponse:
    if not await store.retry_dead([item_id], tenant=session.tenant):
        raise NotFoundError(f"dead letter {item_id}")
    return see_other("/console/operations", "retried")
