"""ADR 0040: a calibration fitted on cosine and keyword coverage apart, still monotone in each,
served as the one-signal map of the fused score."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.application.memory.calibration import CalibrationFitError, fit_fused


def _pairs(
    a: float, b: float, c: float, n: int = 4000
) -> tuple[list[float], list[float], list[bool]]:
    """Pairs drawn from a known logistic law in (cosine, coverage)."""
    rng = np.random.default_rng(7)
    cosines = rng.uniform(-0.1, 0.8, n)
    coverages = rng.uniform(0.0, 1.0, n)
    relevant = rng.uniform(0.0, 1.0, n) < 1.0 / (1.0 + np.exp(-(a * cosines + b * coverages + c)))
    return cosines.tolist(), coverages.tolist(), relevant.tolist()


def test_the_fit_finds_the_weight_coverage_carries_beside_the_cosine() -> None:
    cosines, coverages, relevant = _pairs(a=8.0, b=4.0, c=-3.0)

    fused = fit_fused(cosines, coverages, relevant)

    assert fused.lexical_weight == pytest.approx(0.5, abs=0.1)
    assert fused.calibration.slope == pytest.approx(8.0, rel=0.2)


def test_the_fused_fit_is_the_one_signal_map_of_the_fused_score() -> None:
    fused = fit_fused(*_pairs(a=8.0, b=4.0, c=-3.0))
    a, c = fused.calibration.slope, fused.calibration.intercept
    b = fused.lexical_weight * a

    for cosine, held in [(0.2, 0.0), (0.3, 0.5), (0.1, 1.0)]:
        direct = 1.0 / (1.0 + np.exp(-(a * cosine + b * held + c)))
        served = fused.calibration.relevance(cosine + fused.lexical_weight * held)
        assert served == pytest.approx(direct)


def test_pairs_whose_relevance_falls_with_coverage_refuse_to_fit() -> None:
    with pytest.raises(CalibrationFitError):
        fit_fused(*_pairs(a=8.0, b=-2.0, c=-2.0))


def test_pairs_of_one_class_refuse_to_fit() -> None:
    with pytest.raises(CalibrationFitError):
        fit_fused([0.1, 0.9], [0.0, 1.0], [True, True])
