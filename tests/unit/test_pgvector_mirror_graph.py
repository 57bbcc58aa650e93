"""A mirror that reads its graph's nearest facts ranks as one that scans every fact (ADR 0056).

The graph is searched as wide as it is large here, so its list is the true nearest `depth`:
what is tested is the ranking from that list, the keyword holders outside it that the bound
admits, the vectors added or changed after the graph was built, and the scan taken when the
list holds too few visible facts. The reference is the brute-force search of
`test_pgvector_mirror_state`."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from unit.test_pgvector_mirror_state import (
    NOW,
    QUERY_WORDS,
    assert_same_ranking,
    fact_row,
    random_row,
    reference_search,
)

from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.application.memory.types import SearchQuery

DIMENSION = 8


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_a_search_from_the_graph_ranks_as_the_brute_force_search(seed: int) -> None:
    rng = random.Random(seed)
    mirror = MirroredNamespace(epoch=1, version=0, dimension=DIMENSION, capacity=1)
    reference = {}
    ids = [f"m{n:03d}" for n in range(rng.randint(60, 240))]
    first = [random_row(rng, fact_id, 1) for fact_id in ids]
    mirror.apply([dict(row) for row in first])
    reference.update({row["id"]: row for row in first})
    mirror.depth, mirror.breadth = rng.randint(8, 40), 4096
    mirror.index_vectors()
    # After the graph: new facts (appended to it) and rewritten ones, some with a new vector.
    later = [random_row(rng, f"n{n:03d}", 2) for n in range(rng.randint(0, 30))]
    later += [random_row(rng, rng.choice(ids), 2) for _ in range(rng.randint(0, 20))]
    for row in later:
        reference[row["id"]] = row
    mirror.apply([dict(row) for row in later])

    for _ in range(6):
        query = SearchQuery(
            " ".join(rng.sample(QUERY_WORDS, rng.randint(0, 4))),
            threshold=rng.choice((-1.0, 0.0, 0.3, 0.55)),
            limit=rng.randint(1, 10),
            include_superseded=rng.random() < 0.3,
            include_inferred=rng.random() < 0.3,
            include_forgotten=rng.random() < 0.3,
        )
        vector = np.array([rng.gauss(0.0, 1.0) for _ in range(DIMENSION)], dtype=np.float32)
        assert_same_ranking(
            mirror.search(query, vector, NOW), reference_search(reference, query, vector)
        )


def test_a_list_crowded_by_superseded_facts_is_scanned_instead() -> None:
    near = np.array([1.0, 0.0], dtype=np.float32)
    far = np.array([0.0, 1.0], dtype=np.float32)
    mirror = MirroredNamespace(epoch=1, version=0, dimension=2, capacity=1)
    # The 20 nearest facts are all superseded; the only current one is far.
    rows = [
        fact_row(f"old{n:02d}", changed_in=1, vector=near, terms=[], latest=False)
        for n in range(20)
    ]
    rows.append(fact_row("current", changed_in=1, vector=far, terms=[]))
    mirror.apply(rows)
    mirror.depth, mirror.breadth = 5, 64
    mirror.index_vectors()

    [hit] = mirror.search(SearchQuery("x", threshold=-1.0, limit=1), near, NOW)

    assert hit.id == "current"


def test_a_far_fact_holding_the_query_keywords_is_found_past_the_list() -> None:
    rng = random.Random(3)
    mirror = MirroredNamespace(epoch=1, version=0, dimension=DIMENSION, capacity=1)
    query_vector = np.eye(DIMENSION, dtype=np.float32)[0]

    def near(cosine: float) -> np.ndarray:
        # `cosine` to the query, the rest of the unit vector spread over the other axes.
        rest = np.array([rng.gauss(0.0, 1.0) for _ in range(DIMENSION - 1)])
        rest *= np.sqrt(1 - cosine**2) / np.linalg.norm(rest)
        return np.concatenate([[cosine], rest]).astype(np.float32)

    rows = [
        fact_row(f"near{n:02d}", changed_in=1, vector=near(0.5 + n / 1000), terms=[])
        for n in range(40)
    ]
    # Orthogonal to the query, far outside a list 10 deep, but the only holder of both query
    # keywords: 0 + LEXICAL_WEIGHT x 1 beats every listed fact's cosine.
    holder = fact_row("holder", changed_in=1, vector=near(0.0), terms=["alpha", "beta"])
    mirror.apply([dict(row) for row in [*rows, holder]])
    mirror.depth, mirror.breadth = 10, 64
    mirror.index_vectors()
    query = SearchQuery("alpha beta", threshold=-1.0, limit=3)

    hits = mirror.search(query, query_vector, NOW)

    want = reference_search({r["id"]: r for r in [*rows, holder]}, query, query_vector)
    assert_same_ranking(hits, want)
    assert hits[0].id == "holder"
