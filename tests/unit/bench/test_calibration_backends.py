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
    # Today memories mode serves the embedder's cosine; the fit reads it through the backend
    # so that a change of scoring there is what a refit follows.
    embedder = HashingEmbedder(dimension=512)
    pairs = [p for facts in questions(read_pairs(OWN_PAIRS), limit=6) for p in facts]
    served = await backend_scores(embedder, pairs)
    cosines = await similarities(embedder, pairs)
    assert served == pytest.approx([max(0.0, c) for c in cosines], abs=1e-6)
