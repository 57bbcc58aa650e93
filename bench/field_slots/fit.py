"""A softmax per kind over its fields and "none", fitted by gradient descent (numpy)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from factledger.adapters.field_reader.head import KindHead

Matrix = npt.NDArray[np.float32]
STEPS = 400
RATE = 2.0
L2 = 1e-3


def fit(
    vectors: Matrix, labels: list[str], classes: tuple[str, ...], many: frozenset[str]
) -> KindHead:
    index = {c: n for n, c in enumerate(classes)}
    y = np.zeros((len(labels), len(classes)), dtype=np.float32)
    y[np.arange(len(labels)), [index[label] for label in labels]] = 1.0
    weights = np.zeros((vectors.shape[1], len(classes)), dtype=np.float32)
    bias = np.zeros(len(classes), dtype=np.float32)
    head = KindHead(classes, many, weights, bias)
    for _ in range(STEPS):
        error = head.probabilities(vectors) - y
        weights -= RATE * (vectors.T @ error / len(labels) + L2 * weights)
        bias -= RATE * error.mean(axis=0)
    return head
