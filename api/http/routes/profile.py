"""The profile read side: current, a version, as of a time, a field's history, a diff, and the
tenant's review queue. Reads come from the projections, never from replaying a stream."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from factledger.adapters.read_routing import require_views_at, standby_allowed
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
from factledger.api.http.views_caught_up import catch_up_before_read
from factledger.application.ledger.ports import ProfileReader
from factledger.application.ledger.queries import DEFAULT_CLOCK, Clock

router = APIRouter(prefix="/v1/subjects/{subject}/profile", tags=["profile"], responses=ERRORS)  # type: ignore[arg-type]


async def get_profiles(state: StateDep, response: Response) -> ProfileReader:
    """The profile reader, caught up with the log."""
    ports = state.require_ports()
    await catch_up_before_read(ports, response)
    if standby_allowed():
        # A standby's views serve the read only once they are as far as the primary's now.
        require_views_at(await asyncio.to_thread(ports.projection.position))
    return ports.profiles


ProfilesDep = Annotated[ProfileReader, Depends(get_profiles)]


def now_of(state: ApiState) -> datetime:
    """The time expiries are judged by: the ledger's clock, which recall and context use."""
    return state.require_ports().ledger.clock.now()


CLOCK_HELP = (
    "Which clock `as_of` is read on. `said` (the default): the conversations' clock, each "
    "field's latest value said by then, by everything known now (what had the subject told "
    "us by then?). `known`: the ledger's clock, the version written by then (what did the "
    "profile say then?)."
)
ClockQuery = Annotated[Clock, Query(description=CLOCK_HELP)]


def aware(name: str, at: datetime | None) -> datetime | None:
    """`at`, refused (naming the parameter) when it carries no timezone."""
    if at is not None and at.tzinfo is None:
        raise InvalidParameterError(name, "must carry a timezone")
    return at


@router.get("", summary="The current profile, or the one at `as_of` on either clock")
async def current(
    state: StateDep,
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
    as_of: Annotated[datetime | None, Query(description="An aware ISO timestamp.")] = None,
    clock: ClockQuery = DEFAULT_CLOCK,
) -> ProfileOut:
    at = aware("as_of", as_of)
    if at is None:
        profile = await asyncio.to_thread(profiles.current, principal.tenant, subject_id)
        return ProfileOut.of(profile, now_of(state))
    profile = await asyncio.to_thread(profiles.as_of, principal.tenant, subject_id, at, clock)
    return ProfileOut.of(profile, now_of(state), clock)


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


@router.get(
    "/diff",
    summary="What changed between two versions, or between two times on either clock",
)
async def diff(
    state: StateDep,
    principal: Reader,
    subject_id: SubjectIdDep,
    profiles: ProfilesDep,
    from_version: Annotated[int | None, Query(ge=0, le=MAX_VERSION)] = None,
    to_version: Annotated[int | None, Query(ge=0, le=MAX_VERSION)] = None,
    from_as_of: Annotated[
        datetime | None, Query(description="An aware ISO timestamp (instead of versions).")
    ] = None,
    to_as_of: Annotated[datetime | None, Query(description="An aware ISO timestamp.")] = None,
    clock: ClockQuery = DEFAULT_CLOCK,
) -> DiffOut:
    now = now_of(state)
    older, newer = aware("from_as_of", from_as_of), aware("to_as_of", to_as_of)
    if older is None and newer is None:
        if from_version is None or to_version is None:
            name = "from_version" if from_version is None else "to_version"
            raise InvalidParameterError(name, "required: two versions, or two times")
        changes = await asyncio.to_thread(
            profiles.diff, principal.tenant, subject_id, from_version, to_version
        )
        return DiffOut(
            subject_id=subject_id,
            from_version=from_version,
            to_version=to_version,
            changes=[FieldDiffOut.of(c, now) for c in changes],
        )
    if older is None or newer is None:
        raise InvalidParameterError(
            "from_as_of" if older is None else "to_as_of", "required with the other time"
        )
    if from_version is not None or to_version is not None:
        name = "from_version" if from_version is not None else "to_version"
        raise InvalidParameterError(name, "give two versions or two times, not both")
    changes = await asyncio.to_thread(
        profiles.diff_at, principal.tenant, subject_id, older, newer, clock
    )
    return DiffOut(
        subject_id=subject_id,
        from_version=None,
        to_version=None,
        from_as_of=older,
        to_as_of=newer,
        clock=clock.value,
        changes=[FieldDiffOut.of(c, now) for c in changes],
    )
