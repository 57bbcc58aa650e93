"""The queue page as it was before its evidence was loaded on opening (ADR 0091): every quoting
row's evidence in context rendered into the page, the page's subjects read together
(`Ledger.read_subjects`). Kept in the lab as the baseline of the side-by-side run: the page's
template as it was (`templates/queue_inline.html`), served in front of the product's own queue
route on a second console, with the page frame as it was (`templates/base.html`: its script
at the end of the body); every other page, the groups view included, is the product's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal
from uuid import UUID

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import ChoiceLoader, FileSystemLoader
from starlette.routing import Mount

from factledger.api.console import pages
from factledger.api.console.app import MOUNT
from factledger.api.console.guard import Reviewing
from factledger.api.console.queue_view import QueueItem, queue_page
from factledger.api.console.routes import queue as product
from factledger.api.console.subject_view import ContextLine, evidence_context
from factledger.api.http.deps import WRITE_SLOT, LedgerDep
from factledger.api.http.routes.profile import ProfilesDep
from factledger.api.http.routes.queue import FilterDep, QueueDep, parse_cursor
from factledger.application.ledger.ledger import Ledger
from factledger.application.review_queue.cursor import (
    CURSOR_PATTERN,
    encode_cursor,
    encode_snapshot,
)

AROUND = 2  # messages on each side of the quote, as the queue quoted them

_TEMPLATES = Jinja2Templates(
    env=pages.TEMPLATES.env.overlay(
        loader=ChoiceLoader(
            [
                FileSystemLoader(Path(__file__).parent / "templates"),
                pages.TEMPLATES.env.loader or FileSystemLoader(pages.HERE / "templates"),
            ]
        )
    )
)


def queue_contexts(
    ledger: Ledger, tenant: str, items: list[QueueItem]
) -> dict[UUID, tuple[ContextLine, ...]]:
    """The evidence in context of each shown change that quotes one, by change id: the page's
    subjects read together (the product's code before ADR 0091)."""
    quoting = [item.change for item in items if item.change.evidence is not None]
    subjects = ledger.read_subjects(tenant, list(dict.fromkeys(c.subject_id for c in quoting)))
    return {
        c.change_id: evidence_context(subjects[c.subject_id], c.evidence, around=AROUND)
        for c in quoting
        if c.subject_id in subjects
    }


router = APIRouter()


@router.get("/queue", response_class=HTMLResponse)
async def queue_inline(
    request: Request,
    session: Reviewing,
    profiles: ProfilesDep,
    reviews: QueueDep,
    ledger: LedgerDep,
    where: FilterDep,
    cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
    view: Annotated[Literal["items", "groups"], Query()] = "items",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> HTMLResponse:
    if view == "groups":
        return await product.queue(request, session, profiles, reviews, where, cursor, view, offset)
    choices, shown = await asyncio.gather(
        asyncio.to_thread(reviews.choices, session.tenant),
        asyncio.to_thread(
            queue_page, reviews, profiles, session.tenant, where, parse_cursor(cursor)
        ),
    )
    contexts = await asyncio.to_thread(queue_contexts, ledger, session.tenant, shown.items)
    page = shown.page
    context = {
        "session": session,
        "csrf": session.csrf,
        "notice": pages.NOTICES.get(request.query_params.get("notice", "")),
        "reviews": True,
        "administers": session.role.value == "admin",
        "items": shown.items,
        "page": page,
        "params": request.query_params,
        "filtered": not where.is_empty(),
        "choices": choices,
        "contexts": contexts,
        "snapshot": encode_snapshot(page.last_position) if page.last_position else "",
        "next_cursor": None if page.next_cursor is None else encode_cursor(page.next_cursor),
        "previous_cursor": None
        if page.previous_cursor is None
        else encode_cursor(page.previous_cursor),
        "query": lambda **c: product._query(request, **c),
        "back": f"/console/queue?{product._query(request)}",
    }
    return _TEMPLATES.TemplateResponse(request, "queue_inline.html", context)


def evidence_inline(app: FastAPI) -> FastAPI:
    """`app` (the product's, with its console) serving the queue page as it was: the lab's
    route goes in front of the console's own `/queue`."""
    mount = next(r for r in app.routes if isinstance(r, Mount) and r.path == MOUNT)
    console: FastAPI = mount.app  # type: ignore[assignment]
    before = len(console.router.routes)
    console.include_router(router, dependencies=[WRITE_SLOT])
    added = console.router.routes[before:]
    del console.router.routes[before:]
    console.router.routes[:0] = added
    return app
