"""Which server a read may use, for the stores that keep a pool on a hot standby beside the
primary's (the views, pgvector's searches).

A request of the API may read from the standby only when the API said so for it
(`reading_from_standby`, after checking the standby has replayed the caller's last write);
everything else (the sync worker, the projections' followers, the command line) reads the
primary, as before. A request that writes on the primary reads the primary from then on
(`wrote_on_primary`), so it always reads its own writes: the standby may not have replayed them
yet. The route is a mutable object in a context variable because the stores' calls run in
threads (`asyncio.to_thread` copies the context, so a flag set there would be lost).

The technologies share this module (`adapters/postgres`, `adapters/pgvector`), as they share
`postgres_pool`; neither imports the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

# A position the standby's replay is compared with: an LSN in its text form.
POSITION = re.compile(r"^[0-9A-F]{1,8}/[0-9A-F]{1,8}$")


def valid_position(text: str) -> bool:
    """Whether `text` is a position the replay positions hand out (an LSN in its text form)."""
    return POSITION.match(text.upper()) is not None


@dataclass(slots=True)
class ReadRoute:
    """One request's route: whether its reads may go to the standby (yet), and the position
    the standby's views must have reached to be read (the primary's, after the request caught
    them up: another process may have written them after the caller's last write)."""

    standby_allowed: bool
    views_floor: int = 0


_ROUTE: ContextVar[ReadRoute | None] = ContextVar("factledger_read_route", default=None)


def standby_allowed() -> bool:
    """Whether the current read may use a standby (False outside a routed request)."""
    route = _ROUTE.get()
    return route is not None and route.standby_allowed


def wrote_on_primary() -> None:
    """The current request wrote: its later reads go to the primary."""
    route = _ROUTE.get()
    if route is not None:
        route.standby_allowed = False


def views_floor() -> int:
    """The views' position a standby read of them needs (0: any)."""
    route = _ROUTE.get()
    return 0 if route is None else route.views_floor


def require_views_at(position: int) -> None:
    """The current request's view reads need the views at `position` at least."""
    route = _ROUTE.get()
    if route is not None:
        route.views_floor = max(route.views_floor, position)


@contextmanager
def reading_from_standby(allowed: bool) -> Iterator[ReadRoute]:
    """Routes the reads inside the block (and the threads it starts) by `allowed`."""
    route = ReadRoute(standby_allowed=allowed)
    token = _ROUTE.set(route)
    try:
        yield route
    finally:
        _ROUTE.reset(token)
