"""Calibrated relevance: one meaning for a search score on every backend and embedder.

A sentence model's cosine similarity lives on its own scale (MiniLM puts a paraphrase that
shares no word with its fact near 0.4, another model near 0.7), so a fixed threshold means
something different per model. A `Calibration` maps a model's raw similarity to the estimated
probability that the fact answers the question, fitted on labelled (question, fact,
relevant?) pairs with a logistic curve (ADR 0023):

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

from factledger.application.ports import Embedder

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
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(relevant, dtype=np.float64)
    positives = float(y.sum())
    if x.shape != y.shape or positives in (0.0, float(len(y))):
        raise CalibrationFitError("fitting needs relevant and irrelevant pairs")
    weights = np.where(y == 1.0, len(y) / (2 * positives), len(y) / (2 * (len(y) - positives)))
    design = np.column_stack([x, np.ones_like(x)])
    beta = np.zeros(2)
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (weights * (y - p)) - RIDGE * beta
        hessian = (design * (weights * p * (1 - p))[:, None]).T @ design + RIDGE * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if float(np.abs(step).max()) < 1e-10:
            break
    if not beta[0] > 0:
        raise CalibrationFitError("relevance does not rise with the score on these pairs")
    return Calibration(slope=float(beta[0]), intercept=float(beta[1]))


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
