"""The mirrors one process holds, within a budget.

A search of a namespace without a mirror takes the database's path. A namespace earns a
mirror by being searched again: its `earn_after`-th search within `idle_seconds` starts the
mirror's load in the background (one load at a time, so loads never crowd searches out of the
pool). A subject met once (most of a contact centre's) costs no load that would compete with
the searches beside it; one searched turn after turn is mirrored from its next turns. The
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
from factledger.adapters.pgvector.mirror.feed import changes, load
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
    - `earn_after`: the search of a namespace, counted within `idle_seconds`, that starts its
      load; 1 loads at the first. Until then, and while it loads, the database serves it.
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

    def __post_init__(self) -> None:
        if self.earn_after < 1:
            raise ValueError("earn_after: at least 1")


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
        # Namespaces without a mirror: their searches so far and when the first was counted.
        self._searched: OrderedDict[Namespace, tuple[int, float]] = OrderedDict()
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
            if not self._earned(ns):
                return None
            await self.load(ns)
            return self._mirrors.get(ns)
        if ns in self._loading or time.monotonic() < self._retry_at.get(ns, 0.0):
            return None
        if self._earned(ns):
            task = asyncio.create_task(self.load(ns), name=f"factledger.mirror-load:{ns}")
            self._loading[ns] = task
            task.add_done_callback(lambda _: self._loading.pop(ns, None))
        return None

    def _earned(self, ns: Namespace) -> bool:
        """Counts this search of `ns`; true once it is the `earn_after`-th within
        `idle_seconds` (the count then starts again, for a mirror dropped later)."""
        earn_after = self.settings.earn_after
        if earn_after <= 1:
            return True
        now = time.monotonic()
        count, since = self._searched.pop(ns, (0, now))
        if now - since > self.settings.idle_seconds:
            count, since = 0, now
        count += 1
        if count >= earn_after:
            return True
        self._searched[ns] = (count, since)
        if len(self._searched) > _COUNTED_NAMESPACES:
            self._searched.popitem(last=False)
        return False

    async def load(self, ns: Namespace) -> None:
        """Loads `ns`'s mirror now (unless it is past `max_facts` or the budget); a failure is
        logged, and the namespace is tried again after `retry_seconds`."""
        async with self._one_load:
            if ns in self._mirrors:
                return
            started = time.perf_counter()
            self._reading, self._dropped_while_reading = ns, False
            try:
                with port_errors("mirror load"):
                    mirror = await load(
                        self.db,
                        ns,
                        max_facts=self.settings.max_facts,
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
            if self._dropped_while_reading:
                # A forget committed after the snapshot: what it forgot must not be kept. The
                # next search loads the namespace again.
                return
            if mirror is None or mirror.nbytes > self.settings.budget_mb * _MB:
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
