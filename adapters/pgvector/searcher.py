"""Running a pgvector search: which namespaces have an ANN index, the bound statement(s), the
ranking (split from `backend.py`; the SQL is composed in `search.py` and `fused_search.py`).

- A memories-mode search without metadata filters reads the namespace's mirror when this
  process holds one, after one round trip that brings it up to date (`mirror`, ADR 0056).
- A search is one round trip: its statements prepared per connection and bound to the
  namespace in one pipeline (`prepared_search`, ADR 0030 addendum; `bound_search`'s
  `EXECUTE`, which plans every call, still serves `explain` and the bench's comparison).
- A bounded search (memories mode, query keywords, no metadata filter) is one statement that
  ranks in the database and returns only the rows that can be in the answer, which Python
  scores again (`fused_search`, ADR 0050).
- `fused_in_sql` False keeps the form before it for the bench: the vector list and the
  keyword frequencies (ADR 0045), the bound in Python, and, when keywords can still lift a
  fact outside the list into the top, their holders by a second statement (`keyword_bound`,
  ADR 0030, 0048). Filtered memories-mode searches, hybrid and chunks keep their statements.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

from factledger.adapters.pgvector.bound_search import EXPLAIN_FUNCTION, run_bound
from factledger.adapters.pgvector.connection import PgvectorConnections, port_errors
from factledger.adapters.pgvector.fused_search import (
    fused_arguments,
    fused_shape,
    fused_statement,
)
from factledger.adapters.pgvector.keyword_bound import (
    HOLDER_LIMIT,
    BoundedSearchCounts,
    holder_bound,
    holders_statement,
)
from factledger.adapters.pgvector.mirror.cache import MirrorSettings, NamespaceMirrors
from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.adapters.pgvector.prepared_search import run_prepared
from factledger.adapters.pgvector.search import (
    HNSW_EF_SEARCH,
    MEMORY_COLUMNS,
    SearchLists,
    frequencies_statement,
    numbered,
    rank_rows,
    search_statement,
    visibility,
)
from factledger.application.memory.lexical import query_terms
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
)
from factledger.application.ports import Clock, Embedder

ANN_CACHE_SECONDS = 10.0  # how long a search trusts its knowledge of a namespace's ANN index


class PgvectorSearcher:
    """Searches of one backend; `forget_ann` after indexes are built, dropped or emptied."""

    def __init__(
        self,
        db: PgvectorConnections,
        *,
        embedder: Embedder,
        clock: Clock,
        mirror: MirrorSettings = MirrorSettings(),  # noqa: B008 (frozen)
    ) -> None:
        self.db = db
        # Statements prepared per connection (`prepared_search`); False plans each search in
        # `bound_search` as before ADR 0030's addendum, kept for the bench's comparison.
        self.prepared = True
        # None: `search.HNSW_EF_SEARCH`; the bench sets 40 to compare in the same run.
        self.ef_search: int | None = None
        # True fetches a bounded search's keyword frequencies while the query is embedded, in
        # a round trip of their own. Off: on a quiet machine it gained nothing at p50 or p95 and
        # its server CPU read higher (ADR 0045); the bench keeps timing it as a turn.
        self.overlap = False
        # Namespaces with an ANN index: a bounded search reads a vector list this deep, so the
        # bound admits fewer holders past it (ADR 0048; `PgvectorConfig.lexical_depth`, which
        # the backend sets). None: the ranking's own depth.
        self.lexical_depth: int | None = None
        # False takes keyword candidates from that list alone, no holders statement: measured
        # (the bench's "lexical depth" turns) and not kept, it can change the top 3 (ADR 0048).
        self.holders_past_depth = True
        # A bounded search ranks in the database, in one statement that returns only the rows
        # that can be in the answer (`fused_search`, ADR 0050). False: the vector list and the
        # frequencies, the bound in Python, the holders by a second statement when it admits
        # any (ADR 0030-0048), kept for the bench's comparison.
        self.fused_in_sql = True
        # The namespaces' mirrors in this process (ADR 0056); `mirror_reads` False makes every
        # search read the database (the bench's turns that time the database's forms).
        self.mirrors = NamespaceMirrors(db, dimension=embedder.dimension, settings=mirror)
        self.mirror_reads = True
        # False brings the mirror up to date after the query is embedded, not meanwhile: on
        # 2 cores, the round trip, the embedding's thread and the server contend.
        self.mirror_overlap = True
        self._embedder = embedder
        self._clock = clock
        self._ann: tuple[float, frozenset[str]] | None = None  # (fetched at, namespaces)
        self.bounded = BoundedSearchCounts()

    def forget_ann(self) -> None:
        self._ann = None

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        now = self._clock.now()
        # The embedder runs in a thread: what needs no query vector (the mirror's changes, the
        # ANN check, and with `overlap` a bounded search's keyword frequencies) goes meanwhile
        # (ADR 0045, 0056).
        embedding = asyncio.ensure_future(self._embedder.embed([query.text]))
        try:
            if not self.mirror_overlap:
                await asyncio.wait([embedding])
            with port_errors("search"):
                mirror = await self._mirror(namespace, query)
                if mirror is None:
                    ann = await self.has_ann(namespace)
                    early = await self._early_frequencies(namespace, query, now=now)
        except BaseException:
            _discard(embedding)
            raise
        vector = (await embedding)[0]
        if mirror is not None:
            return mirror.search(query, vector, now)
        # No log line per search: it is the hot path, and callers log and meter their calls.
        terms = self._fused_terms(query) if early is None else []
        if terms:
            with port_errors("search"):
                return await self._fused_search(namespace, query, terms, vector, now=now, ann=ann)
        with port_errors("search"):
            rows, lists = await self._bound_rows(
                namespace, query, vector, now=now, explain=False, ann=ann, early=early
            )
            if lists.holders_pending:
                rows += await self._holders(namespace, query, vector, lists, rows, now=now)
        return rank_rows(lists, rows)

    async def _mirror(self, ns: Namespace, query: SearchQuery) -> MirroredNamespace | None:
        """The namespace's mirror, up to date, for a memories-mode search without metadata
        filters (ADR 0056); None: the search reads the database."""
        if not (self.mirror_reads and self.mirrors.enabled):
            return None
        if query.mode is not SearchMode.MEMORIES or query.filters:
            return None
        return await self.mirrors.fresh(ns)

    def _fused_terms(self, query: SearchQuery) -> list[str]:
        """The query's keywords when it is ranked in one statement (`fused_search`): a bounded
        search (`search.bounded_search`), prepared, with holders (the form measured without
        them keeps its own path); none otherwise."""
        if not (self.fused_in_sql and self.prepared and self.holders_past_depth):
            return []
        if query.mode is not SearchMode.MEMORIES or query.filters:
            return []
        return query_terms(query.text)

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
        """A bounded search ranked in the database (ADR 0050): the rows that can be in the
        answer and the keyword frequencies, which `rank_rows` scores again, as the
        two-statement form does."""
        depth = max(query.limit * 4, 20)
        if ann and self.lexical_depth is not None:
            depth = max(depth, self.lexical_depth)
        statement = fused_statement(fused_shape(ns, query, ann=ann, depth=depth))
        args = fused_arguments(ns, query, vector, now=now, terms=terms)
        ef_search = (self.ef_search or HNSW_EF_SEARCH) if ann else None
        rows = await self.db.one_statement(
            lambda conn: run_prepared(conn, ns, statement, args, ef_search=ef_search)
        )
        # The frequency row without a term: how many holders the bound fetched (-1: none).
        [bound] = [r for r in rows if r["id"] is None]
        self._count_fused(bound["score"])
        rows = [r for r in rows if r["id"] is not None]
        lists = SearchLists(query, depth, ((HitKind.MEMORY, False),), tuple(terms))
        return rank_rows(lists, rows)

    def _count_fused(self, holders: float) -> None:
        """`bounded` as the two-statement form counts: a search whose bound admitted holders
        counts as one that would have sent the second statement."""
        self.bounded.searches += 1
        if holders >= 0:
            self.bounded.second_statements += 1
            self.bounded.holders += int(holders)
            self.bounded.at_limit += holders >= HOLDER_LIMIT

    async def _early_frequencies(
        self, ns: Namespace, query: SearchQuery, *, now: datetime
    ) -> list[dict[str, Any]] | None:
        """A bounded search's keyword frequencies, fetched while the query is embedded; None
        when the search has none or does not overlap (`overlap`, `prepared`)."""
        if not (self.overlap and self.prepared):
            return None  # before composing the statement: that costs ~0.1 ms per search
        frequencies = frequencies_statement(ns, query, now=now)
        if frequencies is None:
            return None
        statement, args = frequencies
        return await self.db.one_statement(
            lambda conn: run_prepared(conn, ns, statement, args, ef_search=None)
        )

    async def explain(self, namespace: Namespace, query: SearchQuery) -> str:
        """The plan of the search's first statement (operators: is the ANN index used?); for a
        bounded search, of the two-statement form's vector list, whose scan (the ANN index or
        the exact one) `fused_search` repeats with fewer columns."""
        vector = (await self._embedder.embed([query.text]))[0]
        with port_errors("explain"):
            rows, _ = await self._bound_rows(
                namespace,
                query,
                vector,
                now=self._clock.now(),
                explain=True,
                ann=await self.has_ann(namespace),
            )
        return "\n".join(str(row[EXPLAIN_FUNCTION]) for row in rows)

    async def _bound_rows(
        self,
        ns: Namespace,
        query: SearchQuery,
        vector: Any,
        *,
        now: datetime,
        explain: bool,
        ann: bool,
        early: list[dict[str, Any]] | None = None,
    ) -> tuple[list[dict[str, Any]], SearchLists]:
        """The first statement's rows; `early`, the frequencies fetched already, are added to
        them instead of being fetched again."""
        # One round trip: a pipeline (`prepared_search`) or `bound_search` binds the namespace.
        statements, lists = search_statement(
            ns,
            query,
            vector,
            now=now,
            ann=ann,
            with_frequencies=early is None,
            lexical_depth=self.lexical_depth,
            holders_past_depth=self.holders_past_depth,
        )
        ef_search = (self.ef_search or HNSW_EF_SEARCH) if ann else None
        if self.prepared and not explain:
            first, *more = statements.parts()
            rows = await self.db.one_statement(
                lambda conn: run_prepared(conn, ns, *first, ef_search=ef_search, more=more)
            )
        else:
            statement, args = statements.joined()
            rows = await self.db.one_statement(
                lambda conn: run_bound(
                    conn, ns, statement, args, ef_search=ef_search, explain=explain
                )
            )
        return rows + (early or []), lists

    async def _holders(
        self,
        ns: Namespace,
        query: SearchQuery,
        vector: Any,
        lists: SearchLists,
        rows: list[dict[str, Any]],
        *,
        now: datetime,
    ) -> list[dict[str, Any]]:
        """Step two of a bounded search: the holders of the keywords that can still matter,
        numbered as the keyword candidate list."""
        vector_rows = [r for r in rows if r["list_no"] == 0]
        frequencies = [r for r in rows if r["list_no"] == len(lists.lists) + 1]
        # An exact vector list shorter than asked holds every visible fact already.
        complete = not await self.has_ann(ns) and len(vector_rows) < lists.depth
        terms = list(lists.terms)
        bound = None if complete else holder_bound(query, terms, vector_rows, frequencies)
        self.bounded.searches += 1
        if bound is None:
            return []
        statement, args = holders_statement(
            ns,
            query,
            vector,
            columns=MEMORY_COLUMNS,
            visible=visibility(query, True, now),
            now=now,
            bound=bound,
        )
        candidates = numbered(len(lists.lists), statement)
        found = await self.db.one_statement(
            lambda conn: (
                run_prepared(conn, ns, candidates, args, ef_search=None)
                if self.prepared
                else run_bound(conn, ns, candidates, args, ef_search=None)
            )
        )
        self.bounded.second_statements += 1
        self.bounded.holders += len(found)
        self.bounded.at_limit += len(found) >= HOLDER_LIMIT
        return found

    async def has_ann(self, ns: Namespace) -> bool:
        if self._ann is None or time.monotonic() - self._ann[0] > ANN_CACHE_SECONDS:
            async with self.db.unbound() as conn:
                cur = await conn.execute("SELECT * FROM ann_namespaces()")
                names = frozenset(row[0] for row in await cur.fetchall())
            self._ann = (time.monotonic(), names)
        return ns in self._ann[1]


def _discard(embedding: asyncio.Future[Any]) -> None:
    """Drops the embedding of a search that failed before it needed the vector: cancelled
    while it runs (its thread finishes alone), its error read if it had one."""
    if not embedding.cancel() and not embedding.cancelled():
        embedding.exception()
