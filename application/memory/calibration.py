"""Calibrated relevance: one meaning for a search score on every backend and embedder.

A sentence model's cosine similarity lives on its own scale (MiniLM puts a paraphrase that
shares no word with its fact near 0.4, another model near 0.7), so a fixed threshold means
something different per model. A `Calibration` maps a model's raw similarity to the estimated
probability that the fact answers the question, fitted on labelled (question, fact,
relevant?) pairs with a logistic curve:

- monotone increasing (the slope is positive), so the ranking never changes;
- bounded in (0, 1);
- invertible, so a threshold on relevance becomes a threshold on raw similarity that the
  backend can apply in its own query.

The classes are weighted to a 1:1 prior when fitting: the relevance reads "as likely relevant
as not" at 0.5, whatever mix of pairs the table was fitted on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factledger.application.memory.ports import Embedder

NEWTON_STEPS = 50
RIDGE = 1e-6  # keeps the Hessian invertible when the classes separate perfectly


class CalibrationFitError(ValueError):
    """The pairs cannot give a calibration: one class is missing or scores do not rise with it."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """relevance = 1 / (1 + exp(-(slope * raw + intercept))), fitted for one model."""

    slope: float
    intercept: float

    def __post_init__(self) -> None:
        if not (self.slope > 0 and math.isfinite(self.slope) and math.isfinite(self.intercept)):
            raise CalibrationFitError("a calibration needs a finite, positive slope")

    def relevance(self, raw: float) -> float:
        z = self.slope * raw + self.intercept
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)  # the same value, without overflow for very negative z
        return e / (1.0 + e)

    def raw_at(self, relevance: float) -> float:
        """The raw similarity whose relevance is `relevance`, clamped to cosine's [-1, 1]."""
        if relevance <= 0.0:
            return -1.0
        if relevance >= 1.0:
            return 1.0
        raw = (math.log(relevance / (1.0 - relevance)) - self.intercept) / self.slope
        return min(1.0, max(-1.0, raw))


def fit_logistic(scores: Sequence[float], relevant: Sequence[bool]) -> Calibration:
    """Weighted logistic regression of `relevant` on `scores` (Newton's method)."""
    slope, intercept = _fit_weighted(np.asarray(scores, dtype=np.float64)[:, None], relevant)
    if not slope > 0:
        raise CalibrationFitError("relevance does not rise with the score on these pairs")
    return Calibration(slope=float(slope), intercept=float(intercept))


@dataclass(frozen=True, slots=True)
class FusedFit:
    """A calibration fitted on two signals: relevance = 1 / (1 + exp(-(a * cosine + b *
    coverage + c))). It is the one-signal map of the fused score `cosine + lexical_weight *
    coverage` (`lexical_weight = b / a`), so a threshold still becomes one raw score."""

    calibration: Calibration  # slope a, intercept c, on the fused score
    lexical_weight: float  # b / a


def fit_fused(
    cosines: Sequence[float], coverages: Sequence[float], relevant: Sequence[bool]
) -> FusedFit:
    """Weighted logistic regression of `relevant` on the cosine and the keyword coverage of
    each pair. Both weights must be positive: relevance then rises with each signal, so the
    ranking by the fused score and the threshold's inversion hold."""
    features = np.column_stack(
        [np.asarray(cosines, dtype=np.float64), np.asarray(coverages, dtype=np.float64)]
    )
    a, b, c = _fit_weighted(features, relevant)
    if not (a > 0 and b > 0):
        raise CalibrationFitError("relevance does not rise with both signals on these pairs")
    return FusedFit(Calibration(slope=float(a), intercept=float(c)), float(b / a))


def _fit_weighted(features: np.ndarray, relevant: Sequence[bool]) -> np.ndarray:
    """The coefficients (one per feature, then the intercept) of a logistic regression with
    the classes weighted 1:1, by Newton's method."""
    y = np.asarray(relevant, dtype=np.float64)
    positives = float(y.sum())
    if features.shape[0] != y.shape[0] or positives in (0.0, float(len(y))):
        raise CalibrationFitError("fitting needs relevant and irrelevant pairs")
    weights = np.where(y == 1.0, len(y) / (2 * positives), len(y) / (2 * (len(y) - positives)))
    design = np.column_stack([features, np.ones(len(y))])
    beta = np.zeros(design.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (weights * (y - p)) - RIDGE * beta
        hessian = (design * (weights * p * (1 - p))[:, None]).T @ design + RIDGE * np.eye(
            design.shape[1]
        )
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if float(np.abs(step).max()) < 1e-10:
            break
    return beta


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """A question, a stored fact, and whether the fact answers the question."""

    question: str
    fact: str
    relevant: bool
    group: str = ""  # pairs of one group (a conversation, a subject) stay on one side of a split


async def similarities(embedder: Embedder, pairs: Sequence[LabelledPair]) -> list[float]:
    """Each pair's raw cosine similarity under `embedder` (each distinct text embedded once)."""
    texts = list(dict.fromkeys(t for p in pairs for t in (p.question, p.fact)))
    vectors = await embedder.embed(texts)
    row = {text: i for i, text in enumerate(texts)}
    return [float(vectors[row[p.question]] @ vectors[row[p.fact]]) for p in pairs]


@dataclass(frozen=True, slots=True)
class Retrieval:
    """Precision and recall of `score >= threshold` over labelled pairs."""

    threshold: float
    precision: float  # 0.0 when nothing passes the threshold
    recall: float
    pairs: int
    relevant: int
    kept: int


def precision_recall(
    scores: Sequence[float], relevant: Sequence[bool], threshold: float
) -> Retrieval:
    kept = [r for s, r in zip(scores, relevant, strict=True) if s >= threshold]
    hits, total = sum(kept), sum(relevant)
    return Retrieval(
        threshold=threshold,
        precision=hits / len(kept) if kept else 0.0,
        recall=hits / total if total else 0.0,
        pairs=len(scores),
        relevant=total,
        kept=len(kept),
    )
