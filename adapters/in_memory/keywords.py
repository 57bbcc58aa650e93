"""Memories-mode scores of the in-memory backend: the cosine lifted by keyword coverage.

Kept apart from `search` so the vector scan and the lexical signal change independently;
the weighting itself is the application's (`application.memory.lexical`), shared with pgvector.
Keyword statistics come from the namespace's postings, so a search reads only the facts that
hold a query keyword, not every fact once per keyword.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from factledger.adapters.in_memory.store import StoredFact
from factledger.application.memory.lexical import (
    coverage,
    fused_score,
    idf_weights,
    query_terms,
)
from factledger.application.memory.types import SearchQuery


def memory_scores(
    query: SearchQuery,
    facts: Sequence[StoredFact],
    similarity: dict[str, float],
    postings: Mapping[str, set[str]],
) -> dict[str, float]:
    """Fused scores of the searched facts that reach the threshold; IDF over those facts."""
    terms = query_terms(query.text)
    searched = {fact.id for fact in facts}
    holders = {t: postings.get(t, set()) & searched for t in terms}
    weights = idf_weights(terms, {t: len(ids) for t, ids in holders.items()}, len(facts))
    lifted = set().union(*holders.values()) if holders else set()
    scores = {
        fact_id: fused_score(similarity[fact_id], 0.0)
        if fact_id not in lifted
        else fused_score(similarity[fact_id], coverage(terms, weights, _held(fact_id, holders)))
        for fact_id in searched
    }
    return {k: v for k, v in scores.items() if v >= query.threshold}


def _held(fact_id: str, holders: Mapping[str, set[str]]) -> set[str]:
    return {term for term, ids in holders.items() if fact_id in ids}
