"""The profile read side: current, a version, as of a time, a field's history, a diff, and the
tenant's review queue. Reads come from the projections, never from replaying a stream."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from factledger.api.http.deps import ApiState, Reader, StateDep, SubjectIdDep
from factledger.api.http.errors import InvalidParameterError
from factledger.api.http.schemas.common import ERRORS, FIELD_PATTERN, MAX_VERSION
from factledger.api.http.schemas.profile import (
    DiffOut,
    FieldDiffOut,
    HistoryEntryOut,
    HistoryOut,
    ProfileOut,
)
from factledger.application.ledger.queries import ProfileReader
from factledger.application.ledger.view_store import PositionMovedError

router = APIRouter(prefix="/v1/subjects/{subject}/profile", tags=["profile"], responses=ERRORS)  # type: ignore[arg-type]


async def get_profiles(state: StateDep) -> ProfileReader:
    """The profile reader, caught up with the log."""
    ports = state.require_ports()
    # Read-your-writes for callers of this process; a no-op when nothing is new. Another
    # process that advanced the views first makes this one's catch-up redundant.
    with contextlib.suppress(PositionMovedError):
        await asyncio.to_thread(ports.catch_up)
    return ports.profiles


ProfilesDep = Annotated[ProfileReader, Depends(get_profiles)]


def now_of(state: ApiState) -> datetime:
    """The time expiries are judged by: the ledger's clock, which recall and context use."""
    return state.require_ports().ledger.clock.now()


@router.get("", summary="The current profile, or the one in force at `as_of`")
async def current(
    state: StateDep,
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
    as_of: Annotated[datetime | None, Query(description="An aware ISO timestamp.")] = None,
) -> ProfileOut:
    if as_of is None:
        profile = await asyncio.to_thread(profiles.current, principal.tenant, subject_id)
    elif as_of.tzinfo is None:
        raise InvalidParameterError("as_of", "must carry a timezone")
    else:
        profile = await asyncio.to_thread(profiles.as_of, principal.tenant, subject_id, as_of)
    return ProfileOut.of(profile, now_of(state))


@router.get("/versions/{version}", summary="One profile version, exactly as it was written")
async def version(
    version: Annotated[int, Path(ge=0, le=MAX_VERSION)],
    state: StateDep,
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
) -> ProfileOut:
    found = await asyncio.to_thread(profiles.version, principal.tenant, subject_id, version)
    return ProfileOut.of(found, now_of(state))


@router.get("/history", summary="The life of every field, or of one (`field`)")
async def history(
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
    field: Annotated[str | None, Query(pattern=FIELD_PATTERN)] = None,
) -> HistoryOut:
    entries = await asyncio.to_thread(profiles.history, principal.tenant, subject_id, field)
    return HistoryOut(
        subject_id=subject_id, field=field, entries=[HistoryEntryOut.of(e) for e in entries]
    )


@router.get("/diff", summary="What changed between two versions")
async def diff(
    state: StateDep,
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
    from_version: Annotated[int, Query(ge=0, le=MAX_VERSION)],
    to_version: Annotated[int, Query(ge=0, le=MAX_VERSION)],
) -> DiffOut:
    changes = await asyncio.to_thread(
        profiles.diff, principal.tenant, subject_id, from_version, to_version
    )
    return DiffOut(
        subject_id=subject_id,
        from_version=from_version,
        to_version=to_version,
        changes=[FieldDiffOut.of(c, now_of(state)) for c in changes],
    )
