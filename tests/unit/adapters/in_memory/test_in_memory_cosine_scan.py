"""The matrix scan answers exactly what scoring only the visible facts answers: the same
hits, in the same order (ties by id), at any limit, threshold and share of hidden facts; and
copies of one vector are ties wherever they sit in the matrix."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.adapters.in_memory.keywords import visible_fact
from factledger.adapters.in_memory.search import search_namespace
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.scoring import cosine_scores, rank_desc
from factledger.application.memory.types import SearchQuery

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIMENSION = 4


def _state(vectors: np.ndarray, hidden: list[bool], latest: list[bool]) -> NamespaceState:
    state = NamespaceState(DIMENSION)
    rows = state.fact_vectors.append(vectors)
    for n, row in enumerate(rows):
        fact = StoredFact(
            id=f"m{n:03d}",
            text=f"fact {n}",
            slot=None,
            document_id="d",
            occurred_at=NOW,
            row=row,
            tokens=Counter(),
            metadata={},
            forgotten=hidden[n],
            is_latest=latest[n],
        )
        state.add_fact(fact)
    return state


def _filter_first(state: NamespaceState, query: SearchQuery, vector: np.ndarray) -> list[str]:
    """The search before the scan: filter every fact, score each of the rest alone, rank."""
    visible = [f for f in state.fact_rows if visible_fact(f, query, NOW)]
    matrix = state.fact_vectors.matrix()
    scores = {
        f.id: min(1.0, float(cosine_scores(matrix[f.row : f.row + 1], vector)[0])) for f in visible
    }
    kept = {k: v for k, v in scores.items() if v >= query.threshold}
    return rank_desc(kept)[: query.limit]


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=60),
    distinct=st.integers(min_value=1, max_value=8),  # few distinct vectors: many ties
    limit=st.integers(min_value=1, max_value=12),
    threshold=st.sampled_from([-1.0, 0.0, 0.3, 0.9]),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_the_scan_equals_filtering_first(
    count: int, distinct: int, limit: int, threshold: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    palette = rng.normal(size=(distinct, DIMENSION)).astype(np.float32)
    palette /= np.linalg.norm(palette, axis=1, keepdims=True)
    vectors = palette[rng.integers(0, distinct, size=count)]
    state = _state(
        vectors.reshape(count, DIMENSION),
        hidden=list(rng.random(count) < 0.4),
        latest=list(rng.random(count) < 0.8),
    )
    query = SearchQuery(text="q", threshold=threshold, limit=limit)
    vector = palette[0]
    hits = search_namespace(state, query, vector, NOW)
    assert [h.id for h in hits] == _filter_first(state, query, vector)


@settings(max_examples=100, deadline=None)
@given(
    dimension=st.sampled_from([4, 7, 384]),
    count=st.integers(min_value=1, max_value=80),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_copies_of_one_vector_score_alike_wherever_they_sit(
    dimension: int, count: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    vector = rng.normal(size=dimension).astype(np.float32)
    vector /= np.linalg.norm(vector)
    others = rng.normal(size=(count, dimension)).astype(np.float32)
    matrix = np.vstack([others, np.tile(vector, (count, 1))])
    scores = cosine_scores(matrix, vector)
    assert len(set(scores[count:].tolist())) == 1
    assert np.array_equal(cosine_scores(matrix[count - 1 :: 3], vector), scores[count - 1 :: 3])


def test_facts_added_after_a_search_are_found_by_the_next() -> None:
    vectors = np.eye(DIMENSION, dtype=np.float32)
    state = _state(vectors[:2], hidden=[False, False], latest=[True, True])
    query = SearchQuery(text="q", threshold=0.5, limit=3)
    assert [h.id for h in search_namespace(state, query, vectors[3], NOW)] == []
    (row,) = state.fact_vectors.append(vectors[3:4])
    state.add_fact(
        StoredFact("m999", "new", None, "d", NOW, row, Counter(), {}),
    )
    assert [h.id for h in search_namespace(state, query, vectors[3], NOW)] == ["m999"]
