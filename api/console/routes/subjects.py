"""Subjects: the tenant's list, one subject's profile with provenance, versions and their diff,
field history and pending proposals; its sessions; what the memory backend holds; forget.

Analysts see profiles, versions and history only, as through the API; sessions, memories
and proposals are for reviewers and admins, and forgetting for admins.
"""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from factledger.api.console.actions import NONCE_PATTERN, Forget, forget
from factledger.api.console.as_of_view import LookBack, look_back
from factledger.api.console.guard import (
    CSRF,
    Administering,
    ConsoleDep,
    Reading,
    Reviewing,
)
from factledger.api.console.guard import subject_in_tenant as checked
from factledger.api.console.memory_view import LedgerSide, any_forgotten, memory_page
from factledger.api.console.pages import render_page, see_other
from factledger.api.console.subject_view import recorded_sessions, sessions_in, subject_page
from factledger.api.http.deps import LedgerDep
from factledger.api.http.errors import InvalidParameterError, ServiceUnavailableError
from factledger.api.http.routes.profile import ProfilesDep
from factledger.api.http.routes.queue import QueueDep
from factledger.api.http.schemas.common import FIELD_PATTERN, MAX_VERSION, SESSION_ID_PATTERN
from factledger.application.errors import NotFoundError
from factledger.application.ledger.queries import DEFAULT_CLOCK, Clock
from factledger.application.memory.rules import ID_PATTERN
from factledger.domain.provenance import MAX_REASON
from factledger.domain.values import MAX_ITEMS, ListValue

router = APIRouter()
Version = Annotated[int | None, Query(ge=0, le=MAX_VERSION)]
FieldName = Annotated[str | None, Query(pattern=FIELD_PATTERN)]
MemoryId = Annotated[str | None, Query(pattern=ID_PATTERN.pattern)]
Day = Annotated[date | None, Query()]


@router.get("/subjects", response_class=HTMLResponse)
async def subjects(request: Request, session: Reading, profiles: ProfilesDep) -> HTMLResponse:
    found = await asyncio.to_thread(profiles.subjects, session.tenant)
    found.sort(key=lambda s: (s.kind, s.external_ref))
    return render_page(request, "subjects.html", session, subjects=found)


@router.get("/subjects/{subject_id}", response_class=HTMLResponse)
async def subject(
    request: Request,
    subject_id: UUID,
    session: Reading,
    console: ConsoleDep,
    profiles: ProfilesDep,
    queue: QueueDep,
    from_version: Version = None,
    to_version: Version = None,
    as_of: Day = None,
    clock: Annotated[Clock, Query()] = DEFAULT_CLOCK,
    from_date: Day = None,
    to_date: Day = None,
) -> HTMLResponse:
    await checked(console, session, subject_id)
    compare = None
    if from_version is not None and to_version is not None:
        compare = (from_version, to_version)
    elif (from_version is None) != (to_version is None):
        missing = "to_version" if to_version is None else "from_version"
        raise InvalidParameterError(missing, "give both versions to compare them")
    days = None
    if from_date is not None and to_date is not None:
        days = (from_date, to_date)
    elif (from_date is None) != (to_date is None):
        missing = "to_date" if to_date is None else "from_date"
        raise InvalidParameterError(missing, "give both days to compare them")
    asked = LookBack(clock, as_of, days)
    page = await asyncio.to_thread(
        lambda: subject_page(profiles, session.tenant, subject_id, compare, queue=queue)
    )
    past = await asyncio.to_thread(look_back, profiles, session.tenant, subject_id, asked)
    return render_page(request, "subject.html", session, page=page, compare=compare, past=past)


@router.get("/subjects/{subject_id}/sessions", response_class=HTMLResponse)
async def sessions(
    request: Request,
    subject_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    profiles: ProfilesDep,
    focus: Annotated[str | None, Query(pattern=SESSION_ID_PATTERN)] = None,
) -> HTMLResponse:
    await checked(console, session, subject_id)
    summary = await asyncio.to_thread(profiles.subject, session.tenant, subject_id)
    recorded = await asyncio.to_thread(recorded_sessions, ledger, subject_id)
    return render_page(
        request, "sessions.html", session, subject=summary, sessions=recorded, focus=focus
    )


@router.get("/subjects/{subject_id}/memory", response_class=HTMLResponse)
async def memory(
    request: Request,
    subject_id: UUID,
    session: Reviewing,
    console: ConsoleDep,
    ledger: LedgerDep,
    profiles: ProfilesDep,
) -> HTMLResponse:
    await checked(console, session, subject_id)
    backend = console.api.require_ports().backend
    if backend is None:
        raise ServiceUnavailableError("no memory backend is configured")
    tenant = session.tenant
    summary = await asyncio.to_thread(profiles.subject, tenant, subject_id)
    # The subject and its events in one read (a standby's when the request may read one):
    # the page's marks come from both, and must not mix two servers.
    read = await asyncio.to_thread(ledger.subject_as_read, tenant, subject_id)
    recorded = sessions_in(read.events)
    written = await asyncio.to_thread(profiles.versions, tenant, subject_id)
    side = LedgerSide(
        ledger,
        read,
        versions=[v.version for v in written],
        forgotten_versions={v.version for v in written if any_forgotten(v)},
    )
    page = await memory_page(backend, subject_id, recorded, side)
    return render_page(request, "memory.html", session, subject=summary, page=page)


@router.get("/subjects/{subject_id}/forget", response_class=HTMLResponse)
async def confirm_forget(
    request: Request,
    subject_id: UUID,
    session: Administering,
    console: ConsoleDep,
    ledger: LedgerDep,
    profiles: ProfilesDep,
    field: FieldName = None,
    memory_id: MemoryId = None,
) -> HTMLResponse:
    """The confirmation step: what will be forgotten, and a reason to give. A field only
    proposed, or whose proposals were rejected, may be forgotten too (its proposals go)."""
    await checked(console, session, subject_id)
    if (field is None) == (memory_id is None):
        raise InvalidParameterError("field", "give exactly one of field or memory_id")
    summary = await asyncio.to_thread(profiles.subject, session.tenant, subject_id)
    current = await asyncio.to_thread(profiles.current, session.tenant, subject_id)
    proposals = 0
    if field is not None:
        aggregate = await asyncio.to_thread(ledger.read_subject, session.tenant, subject_id)
        proposals = len(aggregate.unforgotten_changes(field))
        if field not in current.fields and not proposals:
            raise NotFoundError(f"field {field} of subject {subject_id}")
    held = None if field is None else current.fields.get(field)
    listed = held.value.items if held is not None and isinstance(held.value, ListValue) else ()
    return render_page(
        request,
        "forget.html",
        session,
        subject=summary,
        field=field,
        memory_id=memory_id,
        held=held,
        # A list of several items may lose some of them only (ADR 0160).
        items=listed if len(listed) > 1 else (),
        proposals=proposals,
    )


@router.post("/subjects/{subject_id}/forget", dependencies=[CSRF])
async def do_forget(
    subject_id: Annotated[UUID, Path()],
    session: Administering,
    console: ConsoleDep,
    nonce: Annotated[str, Form(pattern=NONCE_PATTERN)],
    reason: Annotated[str, Form(max_length=MAX_REASON)] = "",
    field: Annotated[str | None, Form(pattern=FIELD_PATTERN)] = None,
    memory_id: Annotated[str | None, Form(pattern=ID_PATTERN.pattern)] = None,
    items: Annotated[list[str] | None, Form(max_length=MAX_ITEMS)] = None,
) -> RedirectResponse:
    if (field is None) == (memory_id is None):
        raise InvalidParameterError("field", "give exactly one of field or memory_id")
    if not reason.strip():
        raise InvalidParameterError("reason", "is required")
    if items and field is None:
        raise InvalidParameterError("items", "needs field: the list field to forget items of")
    await checked(console, session, subject_id)
    what = Forget(subject_id, field, memory_id, reason.strip(), tuple(items or ()))
    await forget(console.api, session, what, nonce)
    return see_other(f"/console/subjects/{subject_id}", "forgotten")
