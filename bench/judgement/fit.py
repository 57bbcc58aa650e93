"""Fits the heads: multinomial logistic regressions, class-balanced, L2-regularised, by
full-batch Adam in numpy (the corpora are small; nothing beyond numpy is needed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Head
from factledger.bench.judgement.field_data import ClauseExample
from factledger.bench.judgement.span_data import LineExample

STEPS = 400
LEARNING_RATE = 0.05
L2 = 1e-3


def fit_head(x: Matrix, labels: Sequence[str], classes: Sequence[str], l2: float = L2) -> Head:
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


def fit_field_head(examples: Sequence[ClauseExample], l2: float = L2) -> Head:
    """The field head: one score per (clause, field) pair, a softmax per clause over its
    fields and "none" (score 0), fitted to put the clause's weight on the fields it states
    (shared equally) or on none; clauses that state a field weigh as much, in all, as those
    that state none."""
    sizes = np.array([e.pairs.shape[0] for e in examples])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    x = np.vstack([e.pairs for e in examples]).astype(np.float32)
    clause = np.repeat(np.arange(len(examples)), sizes)
    states = np.concatenate([e.states for e in examples]).astype(np.float32)
    count = np.add.reduceat(states, starts)
    target = states / np.maximum(count[clause], 1.0)
    stating = count > 0
    n = len(examples)
    balance = np.where(
        stating, n / (2.0 * max(int(stating.sum()), 1)), n / (2.0 * max(int((~stating).sum()), 1))
    ).astype(np.float32)
    w = np.zeros((x.shape[1], 1), dtype=np.float32)
    b = np.zeros(1, dtype=np.float32)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    for step in range(1, STEPS + 1):
        z = x @ w[:, 0] + b[0]
        top = np.maximum(np.maximum.reduceat(z, starts), 0.0)
        e = np.exp(z - top[clause])
        p = e / (np.exp(-top) + np.add.reduceat(e, starts))[clause]
        error = ((p - target) * balance[clause] / n).astype(np.float32)
        grads = [(x.T @ error)[:, None] + l2 * w, np.array([error.sum()], dtype=np.float32)]
        for i, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[i] = 0.9 * m[i] + 0.1 * grad
            v[i] = 0.999 * v[i] + 0.001 * grad * grad
            mhat = m[i] / (1 - 0.9**step)
            vhat = v[i] / (1 - 0.999**step)
            param -= (LEARNING_RATE * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)
    return Head(w, b, ("field",))


SPAN_VALUE_WEIGHT = 0.3  # the share of the loss the tokens of a value carry, all together


def fit_span_head(examples: Sequence[LineExample], l2: float = L2) -> Head:
    """The span tagger: per token, a softmax over its line's fields and "none" (score 0);
    a (token, field) pair's score is its pair features' and its token features' sum. Tokens
    of a value weigh `SPAN_VALUE_WEIGHT` of the loss in all, the rest the remainder; an unsure
    token (an inferred span) weighs nothing."""
    fields = np.array([e.pairs.shape[1] for e in examples for _ in range(e.pairs.shape[0])])
    starts = np.r_[0, np.cumsum(fields)[:-1]]
    width = examples[0].pairs.shape[2]
    x = np.vstack([e.pairs.reshape(-1, width) for e in examples]).astype(np.float32)
    tok = np.vstack([e.tokens for e in examples]).astype(np.float32)
    n = tok.shape[0]
    row_token = np.repeat(np.arange(n), fields)
    states = np.concatenate([e.states.reshape(-1) for e in examples]).astype(np.float32)
    known = np.concatenate([e.known for e in examples])
    count = np.add.reduceat(states, starts)
    target = states / np.maximum(count[row_token], 1.0)
    inside = count > 0
    weight = (
        np.where(
            inside,
            SPAN_VALUE_WEIGHT * n / max(int(inside.sum()), 1),
            (1.0 - SPAN_VALUE_WEIGHT) * n / max(int((~inside).sum()), 1),
        ).astype(np.float32)
        * known
    )
    w = np.zeros((width + tok.shape[1], 1), dtype=np.float32)
    b = np.zeros(1, dtype=np.float32)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    for step in range(1, STEPS + 1):
        z = x @ w[:width, 0] + (tok @ w[width:, 0])[row_token] + b[0]
        top = np.maximum(np.maximum.reduceat(z, starts), 0.0)
        e = np.exp(z - top[row_token])
        p = e / (np.exp(-top) + np.add.reduceat(e, starts))[row_token]
        error = ((p - target) * weight[row_token] / n).astype(np.float32)
        per_token = np.add.reduceat(error, starts)
        grad_w = (np.concatenate([x.T @ error, tok.T @ per_token])[:, None] + l2 * w).astype(
            np.float32
        )
        grads: list[Matrix] = [grad_w, np.array([error.sum()], dtype=np.float32)]
        for i, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[i] = 0.9 * m[i] + 0.1 * grad
            v[i] = 0.999 * v[i] + 0.001 * grad * grad
            mhat = m[i] / (1 - 0.9**step)
            vhat = v[i] / (1 - 0.999**step)
            param -= (LEARNING_RATE * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)
    return Head(w, b, ("span",))
