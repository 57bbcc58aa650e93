"""In-memory search at 50,000 facts in one subject, beside a bare numpy scan of the same
matrix: the scan (score every row, take the top) is the floor a search cannot beat; the
filter-first variant is how the backend searched before issue 19."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from factledger.adapters.in_memory.search import search_namespace, visible_fact
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
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


def _state(facts: int, seed: int) -> NamespaceState:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(facts, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    state = NamespaceState(DIMENSION)
    rows = state.fact_vectors.append(vectors)
    for n, row in enumerate(rows):
        state.add_fact(
            StoredFact(
                f"m{n}", f"fact {n}", None, "d", NOW, row, Counter(), {},
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
