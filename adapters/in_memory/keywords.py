"""Memories-mode scores of the in-memory backend: the cosine lifted by keyword coverage.

Kept apart from `search` so the vector scan and the lexical signal change independently;
the weighting itself is the application's (`application.memory.lexical`), shared with pgvector.
"""

from __future__ import annotations

from collections.abc import Sequence

from factledger.adapters.in_memory.store import StoredFact
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    query_terms,
)
from factledger.application.memory.types import SearchQuery


def memory_scores(
    query: SearchQuery, facts: Sequence[StoredFact], similarity: dict[str, float]
) -> dict[str, float]:
    """Fused scores of the searched facts that reach the threshold; IDF over those facts."""
    terms = query_terms(query.text)
    frequency = document_frequency(terms, [fact.tokens for fact in facts])
    weights = idf_weights(terms, frequency, len(facts))
    scores = {
        fact.id: fused_score(similarity[fact.id], coverage(terms, weights, fact.tokens))
        for fact in facts
    }
    return {k: v for k, v in scores.items() if v >= query.threshold}
