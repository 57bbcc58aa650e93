"""Running a pgvector search: which namespaces have an ANN index, the statement, the ranking
(split from `backend.py`; the SQL is composed in `search.py` and `fused_search.py`). How it
searches is one frozen `PgvectorSearchPlan`, given at construction.

- A memories-mode search without metadata filters reads the namespace's mirror when this
  process holds one, after one round trip, made while the query is embedded, that brings it up
  to date (`mirror`).
- Otherwise a search is one round trip: its statement prepared per connection and bound to
  the namespace in one pipeline (`prepared_search`).
- A bounded search (memories mode, query keywords, no metadata filter) is one statement that
  ranks in the database and returns only the rows that can be in the answer, which Python
  scores again (`fused_search`). Filtered memories-mode searches, hybrid and chunks
  rank their candidate lists in Python (`search.search_statement`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from datetime import datetime
from typing import Any

from factledger.adapters.pgvector.bound_search import EXPLAIN_FUNCTION, run_bound
from factledger.adapters.pgvector.connection import PgvectorConnections, port_errors
from factledger.adapters.pgvector.fused_search import (
    fused_arguments,
    fused_shape,
    fused_statement,
)
from factledger.adapters.pgvector.keyword_bound import HOLDER_LIMIT, BoundedSearchCounts
from factledger.adapters.pgvector.mirror.cache import NamespaceMirrors
from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.adapters.pgvector.prepared_search import run_prepared
from factledger.adapters.pgvector.search import SearchLists, rank_rows, search_statement
from factledger.adapters.pgvector.search_plan import PgvectorSearchPlan
from factledger.application.clocks import Clock
from factledger.application.memory.lexical import query_terms
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.query_vector import given_vector
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
)

ANN_CACHE_SECONDS = 10.0  # how long a search trusts its knowledge of a namespace's ANN index


class PgvectorSearcher:
    """Searches of one backend; `forget_ann` after indexes are built, dropped or emptied."""

    def __init__(
        self,
        db: PgvectorConnections,
        *,
        embedder: Embedder,
        clock: Clock,
        plan: PgvectorSearchPlan = PgvectorSearchPlan(),  # noqa: B008 (frozen)
    ) -> None:
        self.db = db
        self._plan = plan
        # The namespaces' mirrors in this process, within the plan's budget.
        self.mirrors = NamespaceMirrors(db, dimension=embedder.dimension, settings=plan.mirror)
        self._embedder = embedder
        self._clock = clock
        self._ann: tuple[float, frozenset[str]] | None = None  # (fetched at, namespaces)
        self.bounded = BoundedSearchCounts()

    @property
    def plan(self) -> PgvectorSearchPlan:
        return self._plan

    def forget_ann(self) -> None:
        self._ann = None

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        now = self._clock.now()
        # The embedder runs in a thread: what needs no query vector (the mirror's changes, the
        # ANN check) goes meanwhile. A query that came with its vector embeds nothing.
        embedding = self._embedding(query)
        try:
            with port_errors("search"):
                mirror = await self._mirror(namespace, query)
                ann = False if mirror is not None else await self.has_ann(namespace)
        except BaseException:
            _discard(embedding)
            raise
        vector = await embedding
        if mirror is not None:
            return mirror.search(query, vector, now)
        # No log line per search: it is the hot path, and callers log and meter their calls.
        terms = _bounded_terms(query)
        with port_errors("search"):
            if terms:
                return await self._fused_search(namespace, query, terms, vector, now=now, ann=ann)
            rows, lists = await self._listed_rows(namespace, query, vector, now=now, ann=ann)
        return rank_rows(lists, rows)

    def _embedding(self, query: SearchQuery) -> asyncio.Future[Any]:
        """The query's vector: the one it came with (`given_vector`), or embedded now."""
        given = given_vector(query, self._embedder)
        if given is None:
            return asyncio.ensure_future(_first_row(self._embedder.embed([query.text])))
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        ready.set_result(given)
        return ready

    async def _mirror(self, ns: Namespace, query: SearchQuery) -> MirroredNamespace | None:
        """The namespace's mirror, up to date, for a memories-mode search without metadata
        filters; None: the search reads the database."""
        if not self.mirrors.enabled:
            return None
        if query.mode is not SearchMode.MEMORIES or query.filters:
            return None
        return await self.mirrors.fresh(ns)

    async def _fused_search(
        self,
        ns: Namespace,
        query: SearchQuery,
        terms: list[str],
        vector: Any,
        *,
        now: datetime,
        ann: bool,
    ) -> list[SearchHit]:
        """A bounded search ranked in the database: the rows that can be in the
        answer and the keyword frequencies, which `rank_rows` scores again."""
        depth = max(query.limit * 4, 20)
        if ann:
            depth = max(depth, self._plan.lexical_depth)
        statement = fused_statement(fused_shape(ns, query, ann=ann, depth=depth))
        args = fused_arguments(ns, query, vector, now=now, terms=terms)
        ef_search = self._plan.ef_search if ann else None
        rows = await self.db.for_reads().one_statement(
            lambda conn: run_prepared(conn, ns, statement, args, ef_search=ef_search)
        )
        # The frequency row without a term: how many holders the bound fetched (-1: none).
        [bound] = [r for r in rows if r["id"] is None]
        self._count_fused(bound["score"])
        rows = [r for r in rows if r["id"] is not None]
        lists = SearchLists(query, depth, ((HitKind.MEMORY, False),), tuple(terms))
        return rank_rows(lists, rows)

    def _count_fused(self, holders: float) -> None:
        """`bounded`: a search whose bound admitted holders counts as one that fetched them."""
        self.bounded.searches += 1
        if holders >= 0:
            self.bounded.second_statements += 1
            self.bounded.holders += int(holders)
            self.bounded.at_limit += holders >= HOLDER_LIMIT

    async def _listed_rows(
        self, ns: Namespace, query: SearchQuery, vector: Any, *, now: datetime, ann: bool
    ) -> tuple[list[dict[str, Any]], SearchLists]:
        """The candidate lists of a search that is not bounded, in one prepared statement."""
        statement, args, lists = search_statement(ns, query, vector, now=now, ann=ann)
        ef_search = self._plan.ef_search if ann else None
        rows = await self.db.for_reads().one_statement(
            lambda conn: run_prepared(conn, ns, statement, args, ef_search=ef_search)
        )
        return rows, lists

    async def explain(self, namespace: Namespace, query: SearchQuery) -> str:
        """The plan of the search's candidate lists (operators: is the ANN index used?); for a
        bounded search, of its vector list, whose scan (the ANN index or the exact one)
        `fused_search` runs with fewer columns."""
        vector = (await self._embedder.embed([query.text]))[0]
        ann = await self.has_ann(namespace)
        depth = self._plan.lexical_depth if ann and _bounded_terms(query) else None
        statement, args, _ = search_statement(
            namespace, query, vector, now=self._clock.now(), ann=ann, depth=depth
        )
        ef_search = self._plan.ef_search if ann else None
        with port_errors("explain"):
            rows = await self.db.for_reads().one_statement(
                lambda conn: run_bound(
                    conn, namespace, statement, args, ef_search=ef_search, explain=True
                )
            )
        return "\n".join(str(row[EXPLAIN_FUNCTION]) for row in rows)

    async def has_ann(self, ns: Namespace) -> bool:
        if self._ann is None or time.monotonic() - self._ann[0] > ANN_CACHE_SECONDS:
            async with self.db.for_reads().unbound() as conn:
                cur = await conn.execute("SELECT * FROM ann_namespaces()")
                names = frozenset(row[0] for row in await cur.fetchall())
            self._ann = (time.monotonic(), names)
        return ns in self._ann[1]


def _bounded_terms(query: SearchQuery) -> list[str]:
    """The query's keywords when the search is bounded and ranked in one statement
    (`fused_search`): memories mode without metadata filters; none otherwise."""
    if query.mode is not SearchMode.MEMORIES or query.filters:
        return []
    return query_terms(query.text, query.asked_about)


async def _first_row(embedding: Awaitable[Vectors]) -> Any:
    return (await embedding)[0]


def _discard(embedding: asyncio.Future[Any]) -> None:
    """Drops the embedding of a search that failed before it needed the vector: cancelled
    while it runs (its thread finishes alone), its error read if it had one."""
    if not embedding.cancel() and not embedding.cancelled():
        embedding.exception()
