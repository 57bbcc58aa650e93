"""Embeds a corpus with the packaged embedder and fits every head; cross-validates too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.features import Matrix, features, lead_of, reply_features
from factledger.adapters.judgement.fields import pair_width
from factledger.adapters.judgement.heads import Head, Heads
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.application.ports import Embedder
from factledger.bench.evalsets.cases import Case
from factledger.bench.judgement.corpus import REPLIES, STATEMENTS, Corpus
from factledger.bench.judgement.field_data import field_examples
from factledger.bench.judgement.fit import fit_head

BUCKETS = 1024
YES_GRID = np.round(np.arange(0.4, 0.96, 0.05), 2)
FALSE_YES_MAX = 0.05  # of every labelled reply's no and neither, out of fold
FLAGS = ("hedged", "forget", "correction")
BOOL = ("false", "true")


async def _x(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return features(await embedder.embed(list(texts)), texts, BUCKETS)


async def _xr(embedder: Embedder, replies: Sequence[str]) -> Matrix:
    vectors = await embedder.embed([*replies, *(lead_of(r) for r in replies)])
    n = len(replies)
    return reply_features(vectors[:n], vectors[n:], replies, BUCKETS)


def _targets(corpus: Corpus) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    s = corpus.sentences
    out: dict[str, tuple[list[str], tuple[str, ...]]] = {
        "statement": ([x.statement for x in s], STATEMENTS)
    }
    for flag in FLAGS:
        out[flag] = ([str(getattr(x, flag)).lower() for x in s], BOOL)
    return out


async def train(embedder: Embedder, corpus: Corpus, cases: Sequence[Case] = ()) -> Heads:
    """Every head; the field head from `cases` (labelled conversations), over the features
    the sentence heads just fitted give, with the threshold its cross-validation chose."""
    xs = await _x(embedder, [s.text for s in corpus.sentences])
    heads = {name: fit_head(xs, y, classes) for name, (y, classes) in _targets(corpus).items()}
    xr = await _xr(embedder, [r.reply for r in corpus.replies])
    labels = [r.label for r in corpus.replies]
    heads["answer"] = fit_head(xr, labels, REPLIES)
    yes_min, answer_scores = _yes_threshold(xr, labels, [r.blind for r in corpus.replies])
    ANSWER_FOLDS.update(answer_scores)
    width = pair_width(embedder.dimension)
    blank = Head(np.zeros((width, 2), np.float32), np.zeros(2, np.float32), BOOL)
    sentence_heads = Heads({**heads, "field": blank}, embedder.model_id, BUCKETS, yes_min)
    x, y, groups = await field_examples(LearnedJudge(embedder, sentence_heads), cases)
    if not y or "true" not in y:
        return sentence_heads  # no labelled conversations: no field is ever stated
    heads["field"] = fit_head(x, y, BOOL)
    field_min, fold_scores = _field_threshold(x, y, groups)
    FIELD_FOLDS.update(fold_scores)
    return Heads(heads, embedder.model_id, BUCKETS, yes_min, field_min)


FIELD_FOLDS: dict[str, float] = {}  # the field head's out-of-fold figures at its threshold
ANSWER_FOLDS: dict[str, float] = {}  # the answer head's out-of-fold figures at `yes_min`


def _yes_threshold(
    x: Matrix, y: Sequence[str], blind: Sequence[bool], k: int = 5
) -> tuple[float, dict[str, float]]:
    """The lowest probability of a yes at which no out-of-fold no or neither of the labelled
    conversations' replies is read as a yes, and at most `FALSE_YES_MAX` of every reply's
    (the corpus holds replies written to be hard: "Yes, but it's 30, not 40"); failing
    that, the one with the fewest. A false yes confirms a fact the subject did not."""
    labels = np.array(y)
    p = np.zeros((len(labels), len(REPLIES)), dtype=np.float32)
    for test in _folds(len(labels), k):
        train_rows = np.setdiff1d(np.arange(len(labels)), test)
        p[test] = fit_head(x[train_rows], list(labels[train_rows]), REPLIES).probabilities(x[test])
    is_yes, is_blind = labels == "yes", np.array(blind, dtype=bool)
    candidates: list[tuple[tuple[int, float], float, dict[str, float]]] = []
    for threshold in YES_GRID:
        said = (p[:, 0] >= threshold) & (p[:, 0] >= p[:, 1:].max(axis=1))
        false_yes = said & ~is_yes
        blind_false = int((false_yes & is_blind).sum())
        rate = float(false_yes.sum()) / max(float((~is_yes).sum()), 1.0)
        scores = {
            "false_yes": round(rate, 3),
            "yes_accepted": round(float((said & is_yes).sum()) / max(float(is_yes.sum()), 1), 3),
            "blind_false_yes": float(blind_false),
            "blind_yes_accepted": round(
                float((said & is_yes & is_blind).sum()) / max(float((is_yes & is_blind).sum()), 1),
                3,
            ),
        }
        cost = (blind_false, max(rate - FALSE_YES_MAX, 0.0))
        candidates.append((cost, float(threshold), scores))
    _, threshold, scores = min(candidates, key=lambda c: (c[0], c[1]))
    return threshold, scores


def _field_threshold(
    x: Matrix, y: Sequence[str], groups: Sequence[int], k: int = 4
) -> tuple[float, dict[str, float]]:
    """The threshold with the best F0.5 (precision weighs more) on out-of-fold predictions,
    folds by case so a conversation never scores the head it trained."""
    labels = np.array(y) == "true"
    cases = np.array(groups)
    p = np.zeros(len(labels), dtype=np.float32)
    for fold in range(k):
        test = cases % k == fold
        head = fit_head(x[~test], list(np.array(y)[~test]), BOOL)
        p[test] = head.probabilities(x[test])[:, 1]
    best, chosen, scores = -1.0, 0.5, {}
    for threshold in np.arange(0.3, 0.995, 0.01):
        said = p >= threshold
        tp = float((said & labels).sum())
        precision = tp / max(float(said.sum()), 1.0)
        recall = tp / max(float(labels.sum()), 1.0)
        f = 1.25 * precision * recall / max(0.25 * precision + recall, 1e-9)
        if f > best:
            best, chosen = f, float(threshold)
            scores = {"pair_precision": round(precision, 3), "pair_recall": round(recall, 3)}
    return round(chosen, 2), scores


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
    xr = await _xr(embedder, [r.reply for r in corpus.replies])
    out["answer"] = _cv(xr, [r.label for r in corpus.replies], REPLIES, k)
    return {name: round(acc, 3) for name, acc in out.items()}
