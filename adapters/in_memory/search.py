"""Search over one namespace: cosine lifted by keywords for memories (`keywords`), cosine for
chunks, BM25 + RRF for hybrid. Memories mode scores from one matrix product either way."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from factledger.adapters.in_memory.cosine_scan import row_index, top_by_cosine
from factledger.adapters.in_memory.keywords import lifted_top, visible_fact
from factledger.adapters.in_memory.store import NamespaceState, StoredChunk, StoredFact
from factledger.application.memory.filters import matches
from factledger.application.memory.lexical import keywords, query_terms
from factledger.application.memory.ports import Vectors
from factledger.application.memory.scoring import (
    bm25_scores,
    cosine_scores,
    rank_desc,
    reciprocal_rank_fusion,
)
from factledger.application.memory.types import HitKind, SearchHit, SearchMode, SearchQuery

Item = StoredFact | StoredChunk


def search_namespace(
    state: NamespaceState, query: SearchQuery, vector: Vectors, now: datetime
) -> list[SearchHit]:
    """Hits of one namespace, best first, scores never rising, at most `query.limit`."""
    if query.mode is SearchMode.MEMORIES and not _can_lift(state, query):
        return _scanned(state, query, vector, now)
    if query.mode is SearchMode.MEMORIES:
        return [_hit(fact, score, now) for fact, score in lifted_top(state, query, vector, now)]
    facts: list[Item] = []
    chunks: list[Item] = []
    if query.mode is SearchMode.HYBRID:
        facts = [f for f in state.fact_rows if visible_fact(f, query, now)]
    if query.mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
        chunks = [c for c in state.chunk_rows if matches(query.filters, c.metadata)]
    similarity = {
        **_cosine(state.fact_vectors.matrix(), facts, vector),
        **_cosine(state.chunk_vectors.matrix(), chunks, vector),
    }
    items = {item.id: item for item in (*facts, *chunks)}
    if query.mode is SearchMode.HYBRID:
        scores = _hybrid(query, list(items.values()), similarity)
    else:
        scores = {k: v for k, v in similarity.items() if v >= query.threshold}
    ranked = rank_desc(scores)[: query.limit]
    return [_hit(items[item_id], scores[item_id], now) for item_id in ranked]


def _can_lift(state: NamespaceState, query: SearchQuery) -> bool:
    """Whether a query keyword is held by some fact: only then can a score differ from the
    cosine, and the keyword statistics need every fact's visibility."""
    return any(term in state.fact_postings for term in query_terms(query.text, query.asked_about))


def _scanned(
    state: NamespaceState, query: SearchQuery, vector: Vectors, now: datetime
) -> list[SearchHit]:
    """Memories by cosine alone (no keyword of the query is held by any fact): one scan of
    the matrix, filters only on the best rows."""
    facts = state.fact_rows
    hits = top_by_cosine(
        state.fact_vectors.matrix(),
        facts,
        row_index(state, "facts").rows(facts),
        vector,
        threshold=query.threshold,
        limit=query.limit,
        admit=lambda fact: visible_fact(fact, query, now),
    )
    return [_hit(fact, score, now) for fact, score in hits]


def _cosine(matrix: Vectors, items: Sequence[Item], vector: Vectors) -> dict[str, float]:
    if not items:
        return {}
    rows = np.fromiter((item.row for item in items), dtype=np.int64, count=len(items))
    scores = cosine_scores(matrix[rows], vector)
    # float32 rounding can push an exact match a hair above 1.
    return {item.id: min(1.0, float(s)) for item, s in zip(items, scores, strict=True)}


def _hybrid(
    query: SearchQuery, items: Sequence[Item], similarity: dict[str, float]
) -> dict[str, float]:
    """Admits what passes the semantic threshold or matches a keyword; RRF orders the union."""
    semantic = {k: v for k, v in similarity.items() if v >= query.threshold}
    lexical = bm25_scores(keywords(query.text), [item.tokens for item in items])
    keyword = {item.id: s for item, s in zip(items, lexical, strict=True) if s > 0.0}
    return reciprocal_rank_fusion([rank_desc(semantic), rank_desc(keyword)])


def _hit(item: Item, score: float, now: datetime) -> SearchHit:
    if isinstance(item, StoredChunk):
        return SearchHit(
            id=item.id,
            text=item.text,
            score=score,
            kind=HitKind.CHUNK,
            is_latest=True,
            is_inference=False,
            occurred_at=None,
            document_id=item.record_id,
            metadata=dict(item.metadata),
        )
    return SearchHit(
        id=item.id,
        text=item.text,
        score=score,
        kind=HitKind.MEMORY,
        is_latest=item.is_latest,
        is_inference=item.is_inference,
        occurred_at=item.occurred_at,
        document_id=item.document_id,
        relations=item.relations,
        is_forgotten=item.hidden(now),
        metadata=dict(item.metadata),
        source_indexes=item.source_indexes,
    )
