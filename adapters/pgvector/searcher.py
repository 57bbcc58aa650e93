"""Running a pgvector search: which namespaces have an ANN index, the bound statement(s), the
ranking (split from `backend.py`; the SQL is composed in `search.py`).

- A search is one round trip: its statement prepared per connection and bound to the
  namespace in one pipeline (`prepared_search`, ADR 0030 addendum; `bound_search`'s
  `EXECUTE`, which plans every call, still serves `explain` and the bench's comparison).
  Memories mode with query keywords fetches, in the same statement, the holders of the
  keywords that can still lift a fact into the top (`keyword_bound`, ADR 0030 and 0041).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from factledger.adapters.pgvector.bound_search import EXPLAIN_FUNCTION, run_bound
from factledger.adapters.pgvector.connection import PgvectorConnections, port_errors
from factledger.adapters.pgvector.keyword_bound import HOLDER_LIMIT, BoundedSearchCounts
from factledger.adapters.pgvector.prepared_search import run_prepared
from factledger.adapters.pgvector.search import (
    HNSW_EF_SEARCH,
    SearchLists,
    rank_rows,
    search_statement,
)
from factledger.application.memory.types import Namespace, SearchHit, SearchQuery
from factledger.application.ports import Clock, Embedder

ANN_CACHE_SECONDS = 10.0  # how long a search trusts its knowledge of a namespace's ANN index


class PgvectorSearcher:
    """Searches of one backend; `forget_ann` after indexes are built, dropped or emptied."""

    def __init__(self, db: PgvectorConnections, *, embedder: Embedder, clock: Clock) -> None:
        self.db = db
        # Statements prepared per connection (`prepared_search`); False plans each search in
        # `bound_search` as before ADR 0030's addendum, kept for the bench's comparison.
        self.prepared = True
        # None: `search.HNSW_EF_SEARCH`; the bench sets 40 to compare in the same run.
        self.ef_search: int | None = None
        self._embedder = embedder
        self._clock = clock
        self._ann: tuple[float, frozenset[str]] | None = None  # (fetched at, namespaces)
        self.bounded = BoundedSearchCounts()

    def forget_ann(self) -> None:
        self._ann = None

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        vector = (await self._embedder.embed([query.text]))[0]
        now = self._clock.now()
        # No log line per search: it is the hot path, and callers log and meter their calls.
        with port_errors("search"):
            rows, lists = await self._bound_rows(namespace, query, vector, now=now, explain=False)
        if lists.bounded:
            self._count_holders(lists, rows)
        return rank_rows(lists, rows)

    async def explain(self, namespace: Namespace, query: SearchQuery) -> str:
        """The plan of the search's first statement (operators: is the ANN index used?)."""
        vector = (await self._embedder.embed([query.text]))[0]
        with port_errors("explain"):
            rows, _ = await self._bound_rows(
                namespace, query, vector, now=self._clock.now(), explain=True
            )
        return "\n".join(str(row[EXPLAIN_FUNCTION]) for row in rows)

    async def _bound_rows(
        self, ns: Namespace, query: SearchQuery, vector: Any, *, now: datetime, explain: bool
    ) -> tuple[list[dict[str, Any]], SearchLists]:
        # One round trip: a pipeline (`prepared_search`) or `bound_search` binds the namespace.
        ann = await self.has_ann(ns)
        statement, args, lists = search_statement(ns, query, vector, now=now, ann=ann)
        ef_search = (self.ef_search or HNSW_EF_SEARCH) if ann else None
        rows = await self.db.one_statement(
            lambda conn: (
                run_prepared(conn, ns, statement, args, ef_search=ef_search)
                if self.prepared and not explain
                else run_bound(conn, ns, statement, args, ef_search=ef_search, explain=explain)
            )
        )
        return rows, lists

    def _count_holders(self, lists: SearchLists, rows: list[dict[str, Any]]) -> None:
        holders = sum(1 for row in rows if row["list_no"] == len(lists.lists))
        self.bounded.searches += 1
        self.bounded.with_holders += holders > 0
        self.bounded.holders += holders
        self.bounded.at_limit += holders >= HOLDER_LIMIT

    async def has_ann(self, ns: Namespace) -> bool:
        if self._ann is None or time.monotonic() - self._ann[0] > ANN_CACHE_SECONDS:
            async with self.db.unbound() as conn:
                cur = await conn.execute("SELECT * FROM ann_namespaces()")
                names = frozenset(row[0] for row in await cur.fetchall())
            self._ann = (time.monotonic(), names)
        return ns in self._ann[1]
