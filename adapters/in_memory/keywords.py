"""Memories-mode search of the in-memory backend when a query keyword can lift a score.

The cosine of every fact comes from one matrix product; the keyword lift (the application's
weighting, `application.memory.lexical`, shared with pgvector) is computed in Python only for
the visible facts holding a query keyword, found through the namespace's postings. Keyword
statistics (IDF) are over the visible facts, as a search that scores every fact would count
them; which facts are visible comes from arrays of their flags (`visibility`), and only a
search with metadata filters still tests every fact in Python.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from factledger.adapters.in_memory.cosine_scan import row_index
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.filters import matches
from factledger.application.memory.lexical import lift_by_keywords, query_terms
from factledger.application.memory.ports import Vectors
from factledger.application.memory.scoring import cosine_scores
from factledger.application.memory.types import SearchQuery


def visible_fact(fact: StoredFact, query: SearchQuery, now: datetime) -> bool:
    return (
        (query.include_superseded or fact.is_latest)
        and (query.include_inferred or not fact.is_inference)
        and (query.include_forgotten or not fact.hidden(now))
        and matches(query.filters, fact.metadata)
    )


def lifted_top(
    state: NamespaceState, query: SearchQuery, vector: Vectors, now: datetime
) -> list[tuple[StoredFact, float]]:
    """The `limit` best visible facts by `fused_score` reaching the threshold, best first,
    ties by id: what scoring every visible fact and sorting gives."""
    facts = state.fact_rows
    if not facts or query.limit <= 0:
        return []
    rows = row_index(state, "facts").rows(facts)
    # float32 rounding can push an exact match a hair above 1.
    cosine = np.minimum(cosine_scores(state.fact_vectors.matrix(), vector), np.float32(1.0))
    scores = cosine[rows].astype(np.float64)
    visible = state.fact_visibility.mask(query, now)
    if query.filters:
        visible &= np.fromiter(
            (matches(query.filters, f.metadata) for f in facts), dtype=np.bool_, count=len(facts)
        )
    _lift(state, query, scores, visible)
    scores[~visible] = -np.inf
    candidates = np.flatnonzero(scores >= query.threshold)
    if len(candidates) > query.limit:
        # Everything tied with the limit-th score stays in: ties are broken by id below.
        kth = np.partition(scores[candidates], len(candidates) - query.limit)
        candidates = candidates[scores[candidates] >= kth[len(candidates) - query.limit]]
    ranked = sorted(
        ((facts[int(p)], float(scores[p])) for p in candidates),
        key=lambda hit: (-hit[1], hit[0].id),
    )
    return ranked[: query.limit]


def _lift(
    state: NamespaceState, query: SearchQuery, scores: np.ndarray, visible: np.ndarray
) -> None:
    """Replaces, in `scores`, each visible fact's cosine by its fused score (a fact holding
    no query keyword keeps its cosine). Coverage adds the terms' weights in query order, as
    `coverage` does, so the floats are the same."""
    terms = query_terms(query.text, query.asked_about)
    holders = []
    for term in terms:
        positions = state.term_positions(term)
        holders.append(positions[visible[positions]])
    lift_by_keywords(scores, terms, holders, int(np.count_nonzero(visible)))
