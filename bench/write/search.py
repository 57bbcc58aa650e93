"""In-memory search at 50,000 facts in one subject, beside a bare numpy scan of the same
matrix: the scan (score every row, take the top) is the floor a search cannot beat; the
filter-first variant is how the backend searched before issue 19. With query keywords held by
facts (the keyword lift of ADR 0026), the every-fact variant is how it scored them before the
postings change."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from factledger.adapters.in_memory.keywords import visible_fact
from factledger.adapters.in_memory.search import search_namespace
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.lexical import coverage, fused_score, idf_weights, query_terms
from factledger.application.memory.scoring import cosine_scores, rank_desc
from factledger.application.memory.types import SearchQuery
from factledger.bench.machine import load_average

DIMENSION = 384  # the default embedder's
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SearchFigures:
    facts: int
    numpy_ms: float
    backend_ms: float
    filter_first_ms: float
    load_average: str


VOCABULARY = 2_000  # distinct keywords of the lifted workload
WORDS_PER_FACT = 12  # a fact, its label and its source sentence's keywords


def _state(facts: int, seed: int, *, words: bool = False) -> NamespaceState:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(facts, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    state = NamespaceState(DIMENSION)
    rows = state.fact_vectors.append(vectors)
    for n, row in enumerate(rows):
        state.add_fact(
            StoredFact(
                f"m{n}", f"fact {n}", None, "d", NOW, row, _words(rng) if words else Counter(), {},
                is_latest=n % 10 != 0,  # a tenth superseded, as a long history has
            )
        )  # fmt: skip
    state.fact_vectors.matrix()  # stacked once, as after the first search
    return state


def _filter_first(state: NamespaceState, query: SearchQuery, vector: np.ndarray) -> list[str]:
    facts = [f for f in state.fact_rows if visible_fact(f, query, NOW)]
    rows = np.fromiter((f.row for f in facts), dtype=np.int64, count=len(facts))
    scores = cosine_scores(state.fact_vectors.matrix()[rows], vector)
    similarity = {f.id: min(1.0, float(s)) for f, s in zip(facts, scores, strict=True)}
    kept = {k: v for k, v in similarity.items() if v >= query.threshold}
    return rank_desc(kept)[: query.limit]


def _words(rng: np.random.Generator) -> Counter[str]:
    # Zipf-like: a few common keywords, a long tail of rare ones.
    drawn = np.minimum(rng.zipf(1.3, size=WORDS_PER_FACT), VOCABULARY)
    return Counter(f"word{n}" for n in drawn)


def _every_fact(state: NamespaceState, query: SearchQuery, vector: np.ndarray) -> list[str]:
    """Memories mode before the postings change: every visible fact scored in Python."""
    facts = [f for f in state.fact_rows if visible_fact(f, query, NOW)]
    rows = np.fromiter((f.row for f in facts), dtype=np.int64, count=len(facts))
    cosines = cosine_scores(state.fact_vectors.matrix()[rows], vector)
    similarity = {f.id: min(1.0, float(s)) for f, s in zip(facts, cosines, strict=True)}
    terms = query_terms(query.text)
    holders = {t: state.fact_postings.get(t, set()) & similarity.keys() for t in terms}
    weights = idf_weights(terms, {t: len(ids) for t, ids in holders.items()}, len(facts))
    scores = {
        k: fused_score(v, coverage(terms, weights, {t for t in terms if k in holders[t]}))
        for k, v in similarity.items()
    }
    kept = {k: v for k, v in scores.items() if v >= query.threshold}
    return rank_desc(kept)[: query.limit]


def _numpy_scan(matrix: np.ndarray, vector: np.ndarray, limit: int) -> np.ndarray:
    scores = matrix @ vector
    top = np.argpartition(-scores, limit)[:limit]
    return top[np.argsort(-scores[top])]


def _median_ms(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def measure_search(*, facts: int = 50_000, rounds: int = 30, seed: int = 7) -> SearchFigures:
    state = _state(facts, seed)
    vector = state.fact_vectors.matrix()[1]  # a stored fact's own vector: a real top hit
    query = SearchQuery(text="q", threshold=0.0, limit=10)
    matrix = state.fact_vectors.matrix()
    numpy_ms = backend_ms = filter_ms = 0.0
    # The variants take turns, so they share the machine's load.
    for _ in range(3):
        numpy_ms += _median_ms(lambda: _numpy_scan(matrix, vector, query.limit), rounds)
        backend_ms += _median_ms(lambda: search_namespace(state, query, vector, NOW), rounds)
        filter_ms += _median_ms(lambda: _filter_first(state, query, vector), max(3, rounds // 5))
    return SearchFigures(facts, numpy_ms / 3, backend_ms / 3, filter_ms / 3, load_average())


def measure_lifted_search(*, facts: int = 50_000, rounds: int = 30, seed: int = 7) -> SearchFigures:
    """As `measure_search`, with a query of four keywords (two common, two rare) that facts
    hold, so the keyword lift runs; `filter_first_ms` is the every-fact variant."""
    state = _state(facts, seed, words=True)
    vector = state.fact_vectors.matrix()[1]
    query = SearchQuery(text="word1 word3 word150 word900", threshold=0.0, limit=10)
    found = [h.id for h in search_namespace(state, query, vector, NOW)]
    if found != _every_fact(state, query, vector):
        raise AssertionError("the lifted search and the every-fact variant disagree")
    matrix = state.fact_vectors.matrix()
    numpy_ms = backend_ms = every_ms = 0.0
    for _ in range(3):
        numpy_ms += _median_ms(lambda: _numpy_scan(matrix, vector, query.limit), rounds)
        backend_ms += _median_ms(lambda: search_namespace(state, query, vector, NOW), rounds)
        every_ms += _median_ms(lambda: _every_fact(state, query, vector), max(3, rounds // 5))
    return SearchFigures(facts, numpy_ms / 3, backend_ms / 3, every_ms / 3, load_average())
