"""The mirrors one process holds, within a budget.

A search of a namespace without a mirror takes the database's path. A namespace earns a
mirror by being searched again, as often as its load costs: a load's cost grows with the
namespace's facts, and a mirror pays it back a little at every search it serves (ADR 0225). Its
`earn_after`-th search, none further than `idle_seconds` from the one before, starts the load
in the background (one load at a
time, so loads never crowd searches out of the pool); the load counts the facts first, and a
namespace larger than its searches so far have paid for is not read: it earns its mirror at the
search `MirrorSettings.searches_to_earn` names for its size. A subject met once (most of a
contact centre's) costs no load that would compete with the searches beside it; one searched
turn after turn is mirrored from its next turns, a large one once searched often enough. The
searches after the load read the mirror, brought up to date first by one round trip
(`feed.changes`). A namespace past `max_facts`, or whose load failed, is tried again only
after `retry_seconds`. The least recently searched mirrors go first when the budget is
exceeded, and a mirror not searched for `idle_seconds` is dropped: memory is not held for
subjects nobody asks about, and what was forgotten or erased through another process leaves
this one's memory within that time even if nobody searches the namespace again.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass

import structlog

from factledger.adapters.pgvector.connection import PgvectorConnections, port_errors
from factledger.adapters.pgvector.mirror.feed import TooMany, changes, load
from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.application.errors import MemoryBackendError
from factledger.application.memory.types import Namespace

log = structlog.get_logger(__name__)

_MB = 1 << 20


@dataclass(frozen=True, slots=True)
class MirrorSettings:
    """- `budget_mb`: what the mirrors of one process may hold in all (an estimate of their
      arrays and rows); 0 turns mirrors off, and every search reads the database.
    - `max_facts`: a namespace holding more is not mirrored: the database's HNSW index serves
      it, while a mirror's rows and graph take ~45 MB per 10,000 facts of 384 dimensions.
    - `graph_from`: a mirror of this many facts or more gets a graph of its vectors
      (`ann.VectorGraph`): a search reads its nearest facts instead of scanning every one.
    - `idle_seconds`: a mirror not searched for this long is dropped.
    - `earn_after`: the search of a namespace that starts its load, counted while no two of
      its searches are further apart than `idle_seconds` (the span a mirror is kept for); 1
      loads at the first. Until then, and while it loads, the database serves it.
    - `facts_per_search`: a namespace of `n` facts earns its mirror no earlier than its
      `ceil(n / facts_per_search)`-th search, and no later than its `earn_at_most`-th (ADR
      0225: a load costs what the mirror saves over about 5 database searches at 100 facts, 9
      at 300 and 45-55 at 1,000-5,000, where the load also builds the graph); None:
      `earn_after` alone, whatever the size.
    - `inline`: the search that finds no mirror loads it and waits (tests); otherwise the
      load runs in the background and that search reads the database.
    """

    budget_mb: int = 256
    max_facts: int = 20_000
    graph_from: int = 1_000
    idle_seconds: float = 600.0
    inline: bool = False
    retry_seconds: float = 60.0
    earn_after: int = 2
    facts_per_search: int | None = 20
    earn_at_most: int = 64

    def __post_init__(self) -> None:
        if self.earn_after < 1:
            raise ValueError("earn_after: at least 1")
        if self.facts_per_search is not None and self.facts_per_search < 1:
            raise ValueError("facts_per_search: at least 1, or None")

    def searches_to_earn(self, facts: int) -> int:
        """The search of a namespace of `facts` facts that earns its mirror, counted as
        `earn_after` says."""
        if self.facts_per_search is None:
            return self.earn_after
        by_size = -(-facts // self.facts_per_search)
        return max(self.earn_after, min(self.earn_at_most, by_size))

    def facts_paid_for(self, searches: int) -> int | None:
        """The most facts a namespace searched `searches` times has earned a mirror of (None:
        any number)."""
        if self.facts_per_search is None or searches >= self.earn_at_most:
            return None
        return searches * self.facts_per_search


@dataclass(frozen=True, slots=True)
class _Searches:
    """A namespace's searches counted while it has no mirror: how many, when the last was,
    and how many earn its mirror (`earn_after` until a load has counted its facts)."""

    count: int
    last: float
    needed: int


# How many namespaces without a mirror the process counts searches of: past it the least
# recently searched are forgotten (their count starts again), so the counts stay small.
_COUNTED_NAMESPACES = 50_000


class NamespaceMirrors:
    def __init__(
        self, db: PgvectorConnections, *, dimension: int, settings: MirrorSettings
    ) -> None:
        self.db = db
        self.settings = settings
        self._dimension = dimension
        self._mirrors: OrderedDict[Namespace, MirroredNamespace] = OrderedDict()
        self._loading: dict[Namespace, asyncio.Task[None]] = {}
        self._retry_at: dict[Namespace, float] = {}
        self._used_at: dict[Namespace, float] = {}  # monotonic: when each mirror was last read
        # Namespaces without a mirror: their searches so far, the last one's time, and how many
        # earn it.
        self._searched: OrderedDict[Namespace, _Searches] = OrderedDict()
        self._one_load = asyncio.Lock()
        # The namespace being read by the load under way, and whether it was dropped meanwhile
        # (forgotten or dropped by this process): that load's snapshot may predate the change.
        self._reading: Namespace | None = None
        self._dropped_while_reading = False
        self.loads = 0  # completed loads, for tests and the bench

    @property
    def enabled(self) -> bool:
        return self.settings.budget_mb > 0

    def held(self) -> dict[Namespace, int]:
        """The mirrored namespaces and their facts."""
        return {ns: len(mirror) for ns, mirror in self._mirrors.items()}

    def megabytes(self) -> dict[Namespace, float]:
        """The mirrored namespaces and their size by the budget's estimate."""
        return {ns: mirror.nbytes / _MB for ns, mirror in self._mirrors.items()}

    async def fresh(self, ns: Namespace) -> MirroredNamespace | None:
        """`ns`'s mirror, up to date as of one round trip made now; None when there is none
        yet (its load starts) or the namespace lost facts since (it loads again)."""
        self._drop_idle()
        mirror = self._mirrors.get(ns)
        if mirror is None:
            return await self._missing(ns)
        found = await changes(self.db.for_reads(), ns, mirror.version)
        if found.epoch != mirror.epoch:
            self.drop(ns)
            return await self._missing(ns)
        if found.rows:
            mirror.apply(found.rows)
        mirror.version = max(mirror.version, found.version)
        if self._mirrors.get(ns) is mirror:
            self._mirrors.move_to_end(ns)
            self._used_at[ns] = time.monotonic()
            if found.rows:
                self._keep_within_budget()
        return mirror

    async def _missing(self, ns: Namespace) -> MirroredNamespace | None:
        if self.settings.inline:
            searched = self._earned(ns)
            if searched is None:
                return None
            await self.load(ns, searched)
            return self._mirrors.get(ns)
        if ns in self._loading or time.monotonic() < self._retry_at.get(ns, 0.0):
            return None
        searched = self._earned(ns)
        if searched is not None:
            task = asyncio.create_task(self.load(ns, searched), name=f"factledger.mirror-load:{ns}")
            self._loading[ns] = task
            task.add_done_callback(lambda _: self._loading.pop(ns, None))
        return None

    def _earned(self, ns: Namespace) -> _Searches | None:
        """Counts this search of `ns`; its searches once they are as many as earn its mirror,
        None before. A search further than `idle_seconds` from the one before starts the count
        again, as a mirror unread that long is dropped; the count also starts again once
        earned, for a mirror dropped later."""
        now = time.monotonic()
        searched = self._searched.pop(ns, None)
        if searched is None or now - searched.last > self.settings.idle_seconds:
            # A size counted before is kept: a namespace does not shrink by being left alone.
            needed = self.settings.earn_after if searched is None else searched.needed
            searched = _Searches(0, now, needed)
        searched = _Searches(searched.count + 1, now, searched.needed)
        if searched.count >= searched.needed:
            return searched
        self._count(ns, searched)
        return None

    def _count(self, ns: Namespace, searched: _Searches) -> None:
        self._searched[ns] = searched
        if len(self._searched) > _COUNTED_NAMESPACES:
            self._searched.popitem(last=False)

    async def load(self, ns: Namespace, searched: _Searches | None = None) -> None:
        """Loads `ns`'s mirror now, unless it is past `max_facts` or the budget, or larger than
        the searches counted in `searched` have earned (None: asked for outright, whatever its
        searches). A failure is logged, and the namespace is tried again after
        `retry_seconds`."""
        async with self._one_load:
            if ns in self._mirrors:
                return
            started = time.perf_counter()
            max_facts = self.settings.max_facts
            paid_for = None if searched is None else self.settings.facts_paid_for(searched.count)
            self._reading, self._dropped_while_reading = ns, False
            try:
                with port_errors("mirror load"):
                    mirror = await load(
                        self.db,
                        ns,
                        max_facts=max_facts if paid_for is None else min(max_facts, paid_for),
                        dimension=self._dimension,
                        graph_from=self.settings.graph_from,
                    )
            except MemoryBackendError as exc:
                cause = exc.__cause__ or exc
                log.warning("pgvector.mirror_load_failed", error_type=type(cause).__name__)
                self._retry_later(ns)
                return
            finally:
                self._reading = None
            if isinstance(mirror, TooMany) and searched is not None and mirror.facts <= max_facts:
                # Not yet paid for: the searches go on counting towards its size's count.
                needed = self.settings.searches_to_earn(mirror.facts)
                self._count(ns, _Searches(searched.count, searched.last, needed))
                return
            if self._dropped_while_reading:
                # A forget committed after the snapshot: what it forgot must not be kept. The
                # next search loads the namespace again.
                return
            if isinstance(mirror, TooMany) or mirror.nbytes > self.settings.budget_mb * _MB:
                self._retry_later(ns)
                return
            self._mirrors[ns] = mirror
            self._used_at[ns] = time.monotonic()
            self.loads += 1
            self._keep_within_budget()
            log.info(
                "pgvector.mirror_loaded",
                facts=len(mirror),
                megabytes=round(mirror.nbytes / _MB, 1),
                seconds=round(time.perf_counter() - started, 3),
            )

    def _retry_later(self, ns: Namespace) -> None:
        self._retry_at[ns] = time.monotonic() + self.settings.retry_seconds

    def drop(self, ns: Namespace) -> None:
        if ns == self._reading:
            self._dropped_while_reading = True
        self._mirrors.pop(ns, None)
        self._used_at.pop(ns, None)

    def _drop_idle(self) -> None:
        # The least recently read come first: stop at the first one read recently enough.
        cutoff = time.monotonic() - self.settings.idle_seconds
        while self._mirrors:
            oldest = next(iter(self._mirrors))
            if self._used_at.get(oldest, 0.0) >= cutoff:
                return
            self.drop(oldest)

    def _keep_within_budget(self) -> None:
        budget = self.settings.budget_mb * _MB
        while self._mirrors and sum(m.nbytes for m in self._mirrors.values()) > budget:
            self.drop(next(iter(self._mirrors)))

    async def close(self) -> None:
        tasks = list(self._loading.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._mirrors.clear()
        self._used_at.clear()
        self._searched.clear()
