"""The calibration through a backend's search agrees with the figures computed on the pairs."""

from __future__ import annotations

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.calibration_tables import OWN_PAIRS, read_pairs
from factledger.application.memory.calibration import (
    fit_logistic,
    precision_recall,
    similarities,
)
from factledger.bench.calibration import THRESHOLD
from factledger.bench.calibration_backends import questions, through_backends


async def test_the_in_memory_backend_returns_what_the_pairs_say_passes() -> None:
    embedder = HashingEmbedder(dimension=512)
    pairs = read_pairs(OWN_PAIRS)
    asked = questions(pairs, limit=12)
    flat = [p for facts in asked for p in facts]
    scores = await similarities(embedder, flat)
    calibration = fit_logistic(scores, [p.relevant for p in flat])
    labels = [p.relevant for p in flat]
    expected = precision_recall([calibration.relevance(s) for s in scores], labels, THRESHOLD)

    (served,) = await through_backends(embedder, calibration, asked, ["in-memory"])

    assert (served.backend, served.scale) == ("in-memory", "calibrated")
    assert 0 < expected.kept < len(flat)  # the threshold keeps some facts, not all
    assert served.figures == expected
