"""The queue page as it was before its evidence was loaded on opening (ADR 0091): every quoting
row's evidence in context rendered into the page, the page's subjects read together
(`Ledger.read_subjects`). Kept in the lab as the baseline of the side-by-side run, served in
front of the product's own queue route on a second console.

Only what differs is the lab's: the rows as they were and the page's script at the end of
the document (`templates/queue_inline.html`, extending the product's `queue.html`), and the
evidence read here. The rest of the page is the product's, the groups view and every other
page too: since this was written the page's table also takes the product's column widths and
its list of shortcuts names `e`."""

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
from factledger.api.console.queue_view import QueueItem
from factledger.api.console.routes import queue as product
from factledger.api.console.subject_view import ContextLine, evidence_context
from factledger.api.http.deps import WRITE_SLOT, LedgerDep
from factledger.api.http.routes.profile import ProfilesDep
from factledger.api.http.routes.queue import FilterDep, QueueDep
from factledger.application.ledger.ledger import Ledger
from factledger.application.review_queue.cursor import CURSOR_PATTERN

AROUND = 2  # messages on each side of the quote, as the queue quoted them

# The product's templates, with the lab's page found first.
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
    shown = await product.items_view(request, session, profiles, reviews, where, cursor)
    contexts = await asyncio.to_thread(queue_contexts, ledger, session.tenant, shown["items"])
    context = {**pages.frame_context(request, session), **shown, "contexts": contexts}
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
