"""The lifted memories search (one matrix product, the keyword lift only for the facts in the
query terms' postings) answers exactly what scoring every visible fact answers: the same hits,
the same scores, the same order (ties by id), also after facts are added between searches."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.adapters.in_memory.keywords import visible_fact
from factledger.adapters.in_memory.search import search_namespace
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.lexical import coverage, fused_score, idf_weights, query_terms
from factledger.application.memory.scoring import cosine_scores, keyword_tokens, rank_desc
from factledger.application.memory.types import SearchQuery

NOW = datetime(2026, 1, 1, tzinfo=UTC)
DIMENSION = 8
WORDS = ("apple", "berlin", "coffee", "dentist", "guitar", "harbor", "lisbon", "peanut")


def _add(state: NamespaceState, rng: np.random.Generator, palette: np.ndarray, count: int) -> None:
    vectors = palette[rng.integers(0, len(palette), size=count)].reshape(count, DIMENSION)
    for row in state.fact_vectors.append(vectors):
        words = rng.choice(WORDS, size=int(rng.integers(0, 4)))
        state.add_fact(
            StoredFact(
                id=f"m{row:03d}",
                text=" ".join(words),
                slot=None,
                document_id="d",
                occurred_at=NOW,
                row=row,
                tokens=Counter(keyword_tokens(" ".join(words))),
                metadata={},
                forgotten=bool(rng.random() < 0.3),
                is_latest=bool(rng.random() < 0.8),
                is_inference=bool(rng.random() < 0.2),
            )
        )


def _every_fact(
    state: NamespaceState, query: SearchQuery, vector: np.ndarray
) -> list[tuple[str, float]]:
    """The search before the postings change: list the visible facts, score each, rank."""
    facts = [f for f in state.fact_rows if visible_fact(f, query, NOW)]
    if not facts:
        return []
    rows = np.array([f.row for f in facts], dtype=np.int64)
    # One product over the whole matrix, as the scan without keywords has computed it since
    # issue 19: BLAS may round a product over a subset of rows differently in the last bit.
    cosines = cosine_scores(state.fact_vectors.matrix(), vector)[rows]
    similarity = {f.id: min(1.0, float(s)) for f, s in zip(facts, cosines, strict=True)}
    terms = query_terms(query.text)
    frequency = {t: sum(1 for f in facts if t in f.tokens) for t in terms}
    weights = idf_weights(terms, frequency, len(facts))
    scores = {
        f.id: fused_score(similarity[f.id], coverage(terms, weights, set(f.tokens))) for f in facts
    }
    kept = {k: v for k, v in scores.items() if v >= query.threshold}
    return [(k, kept[k]) for k in rank_desc(kept)[: query.limit]]


@settings(max_examples=200, deadline=None)
@given(
    first=st.integers(min_value=0, max_value=50),
    later=st.integers(min_value=0, max_value=20),
    distinct=st.integers(min_value=1, max_value=6),  # few distinct vectors: many ties
    limit=st.integers(min_value=1, max_value=12),
    threshold=st.sampled_from([-1.0, 0.0, 0.3, 0.6, 0.9]),
    asked=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_the_lifted_search_equals_scoring_every_fact(
    first: int,
    later: int,
    distinct: int,
    limit: int,
    threshold: float,
    asked: list[str],
    flags: tuple[bool, bool, bool],
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    palette = rng.normal(size=(distinct, DIMENSION)).astype(np.float32)
    palette /= np.linalg.norm(palette, axis=1, keepdims=True)
    superseded, inferred, forgotten = flags
    query = SearchQuery(
        text=" ".join(asked),
        threshold=threshold,
        limit=limit,
        include_superseded=superseded,
        include_inferred=inferred,
        include_forgotten=forgotten,
    )
    state = NamespaceState(DIMENSION)
    for count in (first, later):  # the second search sees facts added after the first
        _add(state, rng, palette, count)
        hits = search_namespace(state, query, palette[0], NOW)
        assert [(h.id, h.score) for h in hits] == _every_fact(state, query, palette[0])


def test_a_keyword_lifts_a_fact_above_a_closer_one_without_it() -> None:
    state = NamespaceState(2)
    rows = state.fact_vectors.append(np.array([[0.8, 0.6], [0.6, 0.8]], dtype=np.float32))
    for row, words in zip(rows, ("guitar", "harbor lisbon"), strict=True):
        fact = StoredFact(
            id=f"m{row}",
            text=words,
            slot=None,
            document_id="d",
            occurred_at=NOW,
            row=row,
            tokens=Counter(keyword_tokens(words)),
            metadata={},
        )
        state.add_fact(fact)
    query = SearchQuery(text="lisbon harbor", threshold=0.0, limit=2)
    hits = search_namespace(state, query, np.array([1.0, 0.0], dtype=np.float32), NOW)
    assert [h.id for h in hits] == ["m1", "m0"]
    assert hits[0].score > 0.8  # a cosine of 0.6 lifted by the whole query's keyword weight
