"""The search plans the lab compares: each in a searcher of its own, on the benchmarked
backend's connections, never by changing the backend's running searcher."""

from __future__ import annotations

from dataclasses import replace

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.application.clocks import SystemClock
from factledger.application.memory.ports import Embedder

DATABASE_ONLY = MirrorSettings(budget_mb=0)


def planned(
    backend: PgvectorMemoryBackend,
    embedder: Embedder,
    *,
    lexical_depth: int | None = None,
    ef_search: int | None = None,
    mirror: MirrorSettings | None = None,
) -> PgvectorSearcher:
    """A searcher of `backend`'s connections whose plan is the backend's with these changed."""
    plan = backend.searcher.plan
    plan = replace(
        plan,
        lexical_depth=plan.lexical_depth if lexical_depth is None else lexical_depth,
        ef_search=plan.ef_search if ef_search is None else ef_search,
        mirror=plan.mirror if mirror is None else mirror,
    )
    return PgvectorSearcher(backend.db, embedder=embedder, clock=SystemClock(), plan=plan)
