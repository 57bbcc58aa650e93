"""Embeds a corpus with the packaged embedder and fits every head; cross-validates too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.heads import Head, Heads
from factledger.application.ports import Embedder
from factledger.bench.judgement.corpus import REPLIES, STATEMENTS, Corpus
from factledger.bench.judgement.fit import fit_head

BUCKETS = 1024
YES_MIN = 0.6
FLAGS = ("hedged", "forget", "correction")
BOOL = ("false", "true")


async def _x(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return features(await embedder.embed(list(texts)), texts, BUCKETS)


def _targets(corpus: Corpus) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    s = corpus.sentences
    out: dict[str, tuple[list[str], tuple[str, ...]]] = {
        "statement": ([x.statement for x in s], STATEMENTS)
    }
    for flag in FLAGS:
        out[flag] = ([str(getattr(x, flag)).lower() for x in s], BOOL)
    return out


async def train(embedder: Embedder, corpus: Corpus) -> Heads:
    xs = await _x(embedder, [s.text for s in corpus.sentences])
    heads = {name: fit_head(xs, y, classes) for name, (y, classes) in _targets(corpus).items()}
    xr = await _x(embedder, [r.reply for r in corpus.replies])
    heads["answer"] = fit_head(xr, [r.label for r in corpus.replies], REPLIES)
    return Heads(heads, embedder.model_id, BUCKETS, YES_MIN)


def _folds(n: int, k: int) -> list[np.ndarray]:
    order = np.random.default_rng(7).permutation(n)
    return [order[i::k] for i in range(k)]


def _cv(x: Matrix, y: Sequence[str], classes: Sequence[str], k: int) -> float:
    labels = np.array(y)
    right = 0
    for test in _folds(len(labels), k):
        train_rows = np.setdiff1d(np.arange(len(labels)), test)
        head: Head = fit_head(x[train_rows], list(labels[train_rows]), classes)
        predicted = np.array(classes)[np.argmax(head.probabilities(x[test]), axis=1)]
        right += int((predicted == labels[test]).sum())
    return right / len(labels)


async def cross_validate(embedder: Embedder, corpus: Corpus, k: int = 5) -> dict[str, float]:
    """Each head's k-fold accuracy on the corpus (argmax, before the yes threshold)."""
    xs = await _x(embedder, [s.text for s in corpus.sentences])
    out = {name: _cv(xs, y, classes, k) for name, (y, classes) in _targets(corpus).items()}
    xr = await _x(embedder, [r.reply for r in corpus.replies])
    out["answer"] = _cv(xr, [r.label for r in corpus.replies], REPLIES, k)
    return {name: round(acc, 3) for name, acc in out.items()}
