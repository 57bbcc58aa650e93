"""Calibrated relevance: monotone, bounded, invertible, fitted from labelled pairs; and the
backend wrapper that serves it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.calibration import (
    Calibration,
    CalibrationFitError,
    fit_logistic,
    precision_recall,
)
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

CALIBRATION = Calibration(slope=9.6, intercept=-3.15)
COSINES = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(COSINES, COSINES)
def test_relevance_never_falls_as_similarity_rises(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert CALIBRATION.relevance(low) <= CALIBRATION.relevance(high)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_relevance_stays_within_zero_and_one(raw: float) -> None:
    assert 0.0 <= CALIBRATION.relevance(raw) <= 1.0


@given(st.floats(min_value=0.01, max_value=0.99))
def test_the_raw_threshold_gives_back_the_relevance(relevance: float) -> None:
    raw = CALIBRATION.raw_at(relevance)
    if -1.0 < raw < 1.0:
        assert math.isclose(CALIBRATION.relevance(raw), relevance, rel_tol=1e-9)


def test_thresholds_at_the_ends_clamp_to_cosines_range() -> None:
    assert (CALIBRATION.raw_at(0.0), CALIBRATION.raw_at(1.0)) == (-1.0, 1.0)


def test_a_fit_recovers_a_rising_curve_from_labelled_scores() -> None:
    scores = [i / 100 for i in range(100)]
    relevant = [s > 0.4 if i % 7 else s <= 0.4 for i, s in enumerate(scores)]  # some noise
    calibration = fit_logistic(scores, relevant)
    assert calibration.slope > 0
    assert 0.3 < calibration.raw_at(0.5) < 0.5  # where the classes meet
    assert calibration.relevance(0.9) > 0.9 > 0.1 > calibration.relevance(0.0)


def test_pairs_whose_relevance_falls_with_the_score_refuse_to_fit() -> None:
    with pytest.raises(CalibrationFitError):
        fit_logistic([0.1, 0.2, 0.8, 0.9], [True, True, False, False])
    with pytest.raises(CalibrationFitError):
        fit_logistic([0.1, 0.9], [True, True])
    with pytest.raises(CalibrationFitError):
        Calibration(slope=-1.0, intercept=0.0)


def test_precision_and_recall_count_what_passes_the_threshold() -> None:
    figures = precision_recall([0.9, 0.7, 0.6, 0.2], [True, False, True, True], 0.55)
    assert (figures.kept, figures.relevant) == (3, 3)
    assert math.isclose(figures.precision, 2 / 3)
    assert math.isclose(figures.recall, 2 / 3)


NS = Namespace("subject-calibrated")


async def a_backend() -> InMemoryMemoryBackend:
    extractor = ScriptedExtractor()
    backend = InMemoryMemoryBackend(
        extractor=extractor, embedder=HashingEmbedder(dimension=512), clock=ManualClock()
    )
    said = [Message(Role.SUBJECT, "We buy from Supplier B, and our dog is called Biscuit.")]
    extractor.script_transcript(
        said,
        ExtractedFact("f0", "works with Supplier B", "supplier", (0,)),
        ExtractedFact("f1", "has a dog called Biscuit", None, (0,)),
    )
    await backend.ingest_transcript(NS, "doc-1", said, occurred_at=ManualClock().now())
    return backend


async def test_the_wrapper_serves_calibrated_scores_in_the_backends_order() -> None:
    inner = await a_backend()
    backend = CalibratedMemoryBackend(inner, CALIBRATION)
    query = SearchQuery("works with supplier", threshold=0.0, limit=10)
    raw = await inner.search(NS, query)
    served = await backend.search(NS, query)
    assert [h.id for h in served] == [h.id for h in raw]
    assert [h.score for h in served] == [CALIBRATION.relevance(h.score) for h in raw]


async def test_the_threshold_is_on_the_calibrated_scale() -> None:
    inner = await a_backend()
    backend = CalibratedMemoryBackend(inner, CALIBRATION)
    (top, *_) = await inner.search(NS, SearchQuery("works with supplier", threshold=0.0))
    just_above = CALIBRATION.relevance(top.score) - 1e-6
    just_below = CALIBRATION.relevance(top.score) + 1e-6
    passing = await backend.search(NS, SearchQuery("works with supplier", threshold=just_above))
    failing = await backend.search(NS, SearchQuery("works with supplier", threshold=just_below))
    assert [h.id for h in passing][:1] == [top.id]
    assert top.id not in [h.id for h in failing]
    assert all(h.score >= just_above for h in passing)


async def test_hybrid_scores_are_fused_ranks_and_pass_through() -> None:
    inner = await a_backend()
    backend = CalibratedMemoryBackend(inner, CALIBRATION)
    query = SearchQuery("supplier", mode=SearchMode.HYBRID, threshold=0.55, limit=5)
    raw_query = SearchQuery(
        "supplier", mode=SearchMode.HYBRID, threshold=CALIBRATION.raw_at(0.55), limit=5
    )
    assert await backend.search(NS, query) == await inner.search(NS, raw_query)
