"""The calibration through a backend's search agrees with the figures computed on the pairs."""

from __future__ import annotations

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.calibration_tables import OWN_PAIRS, read_pairs
from factledger.application.memory.calibration import (
    fit_logistic,
    precision_recall,
    similarities,
)
from factledger.application.memory.lexical import lexical_terms, query_terms
from factledger.bench.calibration import THRESHOLD
from factledger.bench.calibration_backends import through_backends
from factledger.bench.calibration_scores import backend_scores, questions


async def test_the_in_memory_backend_returns_what_the_pairs_say_passes() -> None:
    embedder = HashingEmbedder(dimension=512)
    pairs = read_pairs(OWN_PAIRS)
    asked = questions(pairs, limit=12)
    flat = [p for facts in asked for p in facts]
    # The pairs scored as memories mode serves them (a fact's asked-about words may lift one,
    # ADR 0036), which is what the calibration is fitted on.
    scores = await backend_scores(embedder, flat)
    calibration = fit_logistic(scores, [p.relevant for p in flat])
    labels = [p.relevant for p in flat]
    expected = precision_recall([calibration.relevance(s) for s in scores], labels, THRESHOLD)

    (served,) = await through_backends(embedder, calibration, asked, ["in-memory"])

    assert (served.backend, served.scale) == ("in-memory", "calibrated")
    assert 0 < expected.kept < len(flat)  # the threshold keeps some facts, not all
    assert served.figures == expected


async def test_the_scores_calibration_maps_are_what_the_backend_serves() -> None:
    # Memories mode serves the embedder's cosine, lifted where the fact's keywords hold a
    # word of the question; the fit reads scores through the backend so that a change of
    # scoring there is what a refit follows.
    embedder = HashingEmbedder(dimension=512)
    pairs = [p for facts in questions(read_pairs(OWN_PAIRS), limit=6) for p in facts]
    served = await backend_scores(embedder, pairs)
    cosines = [max(0.0, c) for c in await similarities(embedder, pairs)]
    shared = [
        bool(set(query_terms(p.question)) & set(lexical_terms(p.fact, p.fact, None))) for p in pairs
    ]

    assert 0 < sum(shared) < len(pairs)  # ordering / order: folded inflections meet
    for score, cosine, lifted in zip(served, cosines, shared, strict=True):
        if lifted:
            assert score > cosine
        else:
            assert score == pytest.approx(cosine, abs=1e-6)
