"""The fused calibration is fitted on the two signals the backends fuse: their fused score must
be the score the in-memory backend serves for the same pairs."""

from __future__ import annotations

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.memory.calibration import LabelledPair
from factledger.application.memory.lexical import fused_score
from factledger.bench.calibration_features import pair_features
from factledger.bench.calibration_scores import backend_scores

PAIRS = [
    LabelledPair("Which town are they in now?", "moved to Lucca", True, "g1"),
    LabelledPair("Which town are they in now?", "works at Globex in Lucca", False, "g1"),
    LabelledPair("Which town are they in now?", "their cat is called Pixel", False, "g1"),
    LabelledPair("Who supplies their cartons?", "buys cartons from Vireo Wraps", True, "g2"),
    LabelledPair("Who supplies their cartons?", "ships with DPD", False, "g2"),
]


async def test_the_fused_features_give_the_served_score() -> None:
    embedder = HashingEmbedder(dimension=256)

    features = await pair_features(embedder, PAIRS)
    served = await backend_scores(embedder, PAIRS)

    for (cosine, held), score in zip(features, served, strict=True):
        if score > 0.0:  # a fact the search does not return scores 0 there
            assert fused_score(cosine, held) == pytest.approx(score, abs=1e-6)
    assert any(held > 0.0 for _, held in features)
