"""A namespace's mirror ranks as a brute-force search over the same rows (ADR 0056).

The reference is written from the application's own scoring functions (`lexical`), one fact at
a time, with no arrays: if the mirror's matrix product, holder sets, growth or row replacement
drift from what a memories-mode search means, the rankings part."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    query_terms,
)
from factledger.application.memory.types import SearchHit, SearchQuery

DIMENSION = 8
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
# "zeta" is held by no fact (it weighs half its IDF), "now" is a word of when no query keeps.
VOCABULARY = ("alpha", "beta", "gamma", "delta", "omega")
QUERY_WORDS = (*VOCABULARY, "zeta", "now")
EXPIRIES = (None, NOW - timedelta(hours=1), NOW, NOW + timedelta(hours=1))
TOLERANCE = 1e-6


def fact_row(
    fact_id: str,
    *,
    changed_in: int,
    vector: npt.NDArray[np.float32],
    terms: list[str],
    latest: bool = True,
    inference: bool = False,
    forgotten: bool = False,
    expires_at: datetime | None = None,
) -> dict[str, Any]:
    """A row as `feed` reads it (`feed._COLUMNS`)."""
    return {
        "id": fact_id,
        "text": f"fact {fact_id}",
        "is_latest": latest,
        "is_inference": inference,
        "is_forgotten": forgotten,
        "expires_at": expires_at,
        "occurred_at": NOW - timedelta(days=1),
        "document_id": "doc",
        "relations": "[]",
        "metadata": "{}",
        "source_indexes": [0],
        "lexical_terms": terms,
        "changed_in": changed_in,
        "embedding": vector,
    }


@dataclass(frozen=True)
class Expected:
    id: str
    score: float
    hidden: bool  # the hit's is_forgotten: forgotten, or expired by now


def reference_search(
    rows: dict[str, dict[str, Any]], query: SearchQuery, vector: npt.NDArray[np.float32]
) -> list[Expected]:
    """A memories-mode search, one fact at a time, as the database path defines it."""

    def expired(row: dict[str, Any]) -> bool:
        return row["expires_at"] is not None and row["expires_at"] <= NOW

    visible = [
        row
        for row in rows.values()
        if (query.include_superseded or row["is_latest"])
        and (query.include_inferred or not row["is_inference"])
        and (query.include_forgotten or not (row["is_forgotten"] or expired(row)))
    ]
    terms = query_terms(query.text)
    held = [set(row["lexical_terms"]) for row in visible]
    weights = idf_weights(terms, document_frequency(terms, held), len(visible))
    q = vector.astype(np.float64)
    scored = []
    for row, keywords in zip(visible, held, strict=True):
        v = row["embedding"].astype(np.float64)
        norms = float(np.linalg.norm(v) * np.linalg.norm(q))
        if norms == 0.0:
            continue  # no cosine: never a hit, though its keywords counted in the IDF above
        cosine = min(1.0, float(v @ q) / norms)
        score = fused_score(cosine, coverage(terms, weights, keywords))
        if score >= query.threshold:
            scored.append(Expected(row["id"], score, row["is_forgotten"] or expired(row)))
    scored.sort(key=lambda e: (-e.score, e.id))
    return scored[: query.limit]


def assert_same_ranking(got: list[SearchHit], want: list[Expected]) -> None:
    assert [h.id for h in got] == [e.id for e in want]
    for hit, expected in zip(got, want, strict=True):
        assert abs(hit.score - expected.score) <= TOLERANCE, hit.id
        assert hit.is_forgotten == expected.hidden, hit.id


def random_vector(rng: random.Random) -> npt.NDArray[np.float32]:
    if rng.random() < 0.08:
        return np.zeros(DIMENSION, dtype=np.float32)  # a fact without a cosine
    return np.array([rng.gauss(0.0, 1.0) for _ in range(DIMENSION)], dtype=np.float32)


def random_row(rng: random.Random, fact_id: str, changed_in: int) -> dict[str, Any]:
    return fact_row(
        fact_id,
        changed_in=changed_in,
        vector=random_vector(rng),
        terms=rng.sample(VOCABULARY, rng.randint(0, 3)),
        latest=rng.random() < 0.8,
        inference=rng.random() < 0.2,
        forgotten=rng.random() < 0.15,
        expires_at=rng.choice(EXPIRIES),
    )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_the_mirror_ranks_as_a_brute_force_search_of_the_same_rows(seed: int) -> None:
    rng = random.Random(seed)
    mirror = MirroredNamespace(epoch=1, version=0, dimension=DIMENSION, capacity=1)
    reference: dict[str, dict[str, Any]] = {}
    ids = [f"m{n:02d}" for n in range(rng.randint(1, 40))]  # past 16, the least capacity
    # Batches, as successive changes round trips bring them.
    for version in range(1, rng.randint(1, 6) + 1):
        batch = [random_row(rng, rng.choice(ids), version) for _ in range(rng.randint(1, 15))]
        if reference and rng.random() < 0.3:
            # A row older than the one held (a slower search's changes): the mirror skips it.
            stale_id = rng.choice(sorted(reference))
            batch.append(random_row(rng, stale_id, reference[stale_id]["changed_in"] - 1))
        for row in batch:
            held = reference.get(row["id"])
            if held is None or row["changed_in"] >= held["changed_in"]:
                reference[row["id"]] = row
        # `apply` keeps the dicts it is given and pops their vectors: hand it copies.
        mirror.apply([dict(row) for row in batch])

    assert len(mirror) == len(reference)
    for _ in range(4):
        words = rng.sample(QUERY_WORDS, rng.randint(0, 4))
        query = SearchQuery(
            " ".join(words),
            threshold=rng.choice((-1.0, 0.0, 0.3, 0.55)),
            limit=rng.randint(1, 10),
            include_superseded=rng.random() < 0.3,
            include_inferred=rng.random() < 0.3,
            include_forgotten=rng.random() < 0.3,
        )
        vector = random_vector(rng)
        assert_same_ranking(
            mirror.search(query, vector, NOW), reference_search(reference, query, vector)
        )


def test_a_fact_expiring_exactly_now_is_hidden_and_shown_forgotten_when_asked() -> None:
    mirror = MirroredNamespace(epoch=1, version=0, dimension=2, capacity=4)
    unit = np.array([1.0, 0.0], dtype=np.float32)
    mirror.apply([fact_row("a", changed_in=1, vector=unit.copy(), terms=[], expires_at=NOW)])

    assert mirror.search(SearchQuery("x", threshold=0.0), unit, NOW) == []
    [hit] = mirror.search(SearchQuery("x", threshold=0.0, include_forgotten=True), unit, NOW)
    assert hit.id == "a"
    assert hit.is_forgotten
    # A microsecond earlier it has not expired yet.
    [hit] = mirror.search(SearchQuery("x", threshold=0.0), unit, NOW - timedelta(microseconds=1))
    assert not hit.is_forgotten


def test_an_update_replaces_the_facts_keywords_and_an_older_row_is_skipped() -> None:
    mirror = MirroredNamespace(epoch=1, version=0, dimension=2, capacity=4)
    unit = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    mirror.apply([fact_row("a", changed_in=1, vector=other.copy(), terms=["alpha"])])
    mirror.apply([fact_row("a", changed_in=3, vector=other.copy(), terms=["beta"])])
    # Version 2's row arrives late: it must not bring "alpha" back.
    mirror.apply([fact_row("a", changed_in=2, vector=other.copy(), terms=["alpha"])])

    assert mirror.search(SearchQuery("alpha", threshold=0.5), unit, NOW) == []
    [hit] = mirror.search(SearchQuery("beta", threshold=0.5), unit, NOW)
    assert hit.id == "a"
    assert hit.score > 0.5

    mirror.apply([fact_row("a", changed_in=4, vector=other.copy(), terms=[], forgotten=True)])
    assert mirror.search(SearchQuery("beta", threshold=-1.0), unit, NOW) == []


def test_a_keyword_no_fact_holds_any_longer_leaves_the_index() -> None:
    """A forgotten fact's words must not outlive it in the process (ADR 0015), nor may the
    words of queries that no fact holds pile up in it."""
    mirror = MirroredNamespace(epoch=1, version=0, dimension=2, capacity=4)
    unit = np.array([1.0, 0.0], dtype=np.float32)
    mirror.apply([fact_row("a", changed_in=1, vector=unit.copy(), terms=["alpha", "beta"])])
    mirror.apply([fact_row("b", changed_in=1, vector=unit.copy(), terms=["beta"])])
    mirror.search(SearchQuery("alpha beta zeta", threshold=0.0), unit, NOW)

    mirror.apply([fact_row("a", changed_in=2, vector=unit.copy(), terms=[], forgotten=True)])
    mirror.search(SearchQuery("alpha beta zeta", threshold=0.0), unit, NOW)

    assert set(mirror._holders) == {"beta"}
    assert set(mirror._holder_arrays) <= {"beta"}
