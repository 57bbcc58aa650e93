"""Fits one head: a multinomial logistic regression, class-balanced, L2-regularised, by
full-batch Adam in numpy (the corpora are small; nothing beyond numpy is needed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Head

STEPS = 400
LEARNING_RATE = 0.05
L2 = 1e-3


def fit_head(
    x: Matrix, labels: Sequence[str], classes: Sequence[str], l2: float = L2
) -> Head:
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[label] for label in labels])
    n, d = x.shape
    k = len(classes)
    onehot = np.eye(k, dtype=np.float32)[y]
    counts = np.bincount(y, minlength=k).astype(np.float32)
    weight = (n / (k * np.maximum(counts, 1.0)))[y][:, None]  # each class weighs the same
    w = np.zeros((d, k), dtype=np.float32)
    b = np.zeros(k, dtype=np.float32)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    for step in range(1, STEPS + 1):
        head = Head(w, b, tuple(classes))
        error = (head.probabilities(x) - onehot) * weight / n
        grads = [x.T @ error + l2 * w, error.sum(axis=0)]
        for i, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[i] = 0.9 * m[i] + 0.1 * grad
            v[i] = 0.999 * v[i] + 0.001 * grad * grad
            mhat = m[i] / (1 - 0.9**step)
            vhat = v[i] / (1 - 0.999**step)
            param -= (LEARNING_RATE * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)
    return Head(w, b, tuple(classes))
