"""Embeds a corpus with the packaged embedder and fits every head; cross-validates too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.fields import field_probabilities, pair_width
from factledger.adapters.judgement.heads import Head, Heads
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.application.memory.ports import Embedder
from factledger.bench.evalsets.cases import Case
from factledger.bench.judgement.conversations import TrainingCase
from factledger.bench.judgement.corpus import REPLIES, STATEMENTS, Corpus
from factledger.bench.judgement.field_data import ClauseExample, field_examples
from factledger.bench.judgement.fit import L2, fit_field_head, fit_head, fit_span_head
from factledger.bench.judgement.span_data import clause_examples, line_examples

BUCKETS = 1024
YES_MIN = 0.6
FLAGS = ("hedged", "forget", "correction")
BOOL = ("false", "true")


async def features_of(embedder: Embedder, texts: Sequence[str], buckets: int = BUCKETS) -> Matrix:
    return features(await embedder.embed(list(texts)), texts, buckets)


def _targets(corpus: Corpus) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    s = corpus.sentences
    out: dict[str, tuple[list[str], tuple[str, ...]]] = {
        "statement": ([x.statement for x in s], STATEMENTS)
    }
    for flag in FLAGS:
        out[flag] = ([str(getattr(x, flag)).lower() for x in s], BOOL)
    return out


async def train(
    embedder: Embedder,
    corpus: Corpus,
    cases: Sequence[Case] = (),
    conversations: Sequence[TrainingCase] = (),
) -> Heads:
    """Every head; the field head from `cases` (labelled conversations, keywords) and
    `conversations` (training conversations, spans), over the features the sentence heads
    just fitted give, with the threshold its cross-validation chose; the span tagger and the
    forget-field head (which field a request to forget concerns) from `conversations`."""
    xs = await features_of(embedder, [s.text for s in corpus.sentences])
    targets = _targets(corpus)
    heads = {name: fit_head(xs, y, classes) for name, (y, classes) in targets.items()}
    forget_min, forget_scores = flag_threshold(xs, targets["forget"][0])
    FORGET_FOLDS.update(forget_scores)
    xr = await features_of(embedder, [r.reply for r in corpus.replies])
    heads["answer"] = fit_head(xr, [r.label for r in corpus.replies], REPLIES)
    width = pair_width(embedder.dimension)
    blank = Head(np.zeros((width, 1), np.float32), np.full(1, -50.0, np.float32), ("field",))
    sentence_heads = Heads(
        {**heads, "field": blank}, embedder.model_id, BUCKETS, YES_MIN, forget_min=forget_min
    )
    judge = LearnedJudge(embedder, sentence_heads)
    examples = await field_examples(judge, cases)
    examples += await clause_examples(judge, conversations, first_case=len(cases))
    if not any(e.states.any() for e in examples):
        return sentence_heads  # no labelled conversations: no field is ever stated
    heads["field"] = fit_field_head(examples)
    field_min, fold_scores = _field_threshold(examples)
    FIELD_FOLDS.update(fold_scores)
    fitted = Heads(heads, embedder.model_id, BUCKETS, YES_MIN, field_min, forget_min=forget_min)
    return await with_span_head(embedder, fitted, conversations)


async def with_span_head(
    embedder: Embedder, heads: Heads, conversations: Sequence[TrainingCase]
) -> Heads:
    """`heads` with the span tagger fitted on `conversations` (their spans), over the
    statement, forget and hedged heads `heads` already has."""
    examples = await line_examples(LearnedJudge(embedder, heads), conversations)
    if not any(e.states.any() for e in examples):
        return heads
    return replace(heads, heads={**heads.heads, "span": fit_span_head(examples)})


FIELD_FOLDS: dict[str, float] = {}  # the field head's out-of-fold figures at its threshold
FORGET_FOLDS: dict[str, float] = {}  # the forget flag's, likewise


def flag_threshold(x: Matrix, y: Sequence[str], k: int = 5) -> tuple[float, dict[str, float]]:
    """The forget flag's threshold with the best F1 on out-of-fold probabilities: a request
    not flagged becomes a memory and a note, a sentence flagged that is none is kept out of
    them and its pending request rejected by a reviewer (ADR 0116)."""
    labels = np.array(y)
    p = np.zeros(len(labels), dtype=np.float32)
    for test in _folds(len(labels), k):
        rows = np.setdiff1d(np.arange(len(labels)), test)
        head = fit_head(x[rows], list(labels[rows]), BOOL)
        p[test] = head.probabilities(x[test])[:, head.column("true")]
    asked = labels == "true"
    best, chosen, scores = -1.0, 0.5, {}
    for threshold in np.arange(0.3, 0.9, 0.01):
        said = p >= threshold
        tp = float((said & asked).sum())
        precision = tp / max(float(said.sum()), 1.0)
        recall = tp / max(float(asked.sum()), 1.0)
        f = _f_beta(precision, recall, 1.0)
        if f > best:
            best, chosen = f, float(threshold)
            scores = {"precision": round(precision, 3), "recall": round(recall, 3)}
    return round(chosen, 2), scores


def _f_beta(precision: float, recall: float, beta2: float) -> float:
    return (1 + beta2) * precision * recall / max(beta2 * precision + recall, 1e-9)


def _field_threshold(
    examples: Sequence[ClauseExample], k: int = 4, beta2: float = 0.25
) -> tuple[float, dict[str, float]]:
    """The threshold with the best F-beta (by default F0.5: precision weighs more) on
    out-of-fold predictions of each clause's most probable field, folds by case so a
    conversation never scores the head it trained."""
    best_p = np.zeros(len(examples), dtype=np.float32)
    right = np.zeros(len(examples), dtype=bool)
    for fold in range(k):
        test = [i for i, e in enumerate(examples) if e.case % k == fold]
        head = fit_field_head([e for e in examples if e.case % k != fold])
        for i in test:
            p = field_probabilities(head.weights, head.bias, examples[i].pairs[None])[0]
            j = int(np.argmax(p))
            best_p[i], right[i] = p[j], bool(examples[i].states[j])
    stating = float(sum(bool(e.states.any()) for e in examples))
    best, chosen, scores = -1.0, 0.5, {}
    for threshold in np.arange(0.2, 0.95, 0.01):
        said = best_p >= threshold
        tp = float((said & right).sum())
        precision = tp / max(float(said.sum()), 1.0)
        recall = tp / max(stating, 1.0)
        f = _f_beta(precision, recall, beta2)
        if f > best:
            best, chosen = f, float(threshold)
            scores = {"clause_precision": round(precision, 3), "clause_recall": round(recall, 3)}
    return round(chosen, 2), scores


def _folds(n: int, k: int) -> list[np.ndarray]:
    order = np.random.default_rng(7).permutation(n)
    return [order[i::k] for i in range(k)]


def _cv(x: Matrix, y: Sequence[str], classes: Sequence[str], k: int, l2: float = L2) -> float:
    labels = np.array(y)
    right = 0
    for test in _folds(len(labels), k):
        train_rows = np.setdiff1d(np.arange(len(labels)), test)
        head: Head = fit_head(x[train_rows], list(labels[train_rows]), classes, l2=l2)
        predicted = np.array(classes)[np.argmax(head.probabilities(x[test]), axis=1)]
        right += int((predicted == labels[test]).sum())
    return right / len(labels)


async def cross_validate(embedder: Embedder, corpus: Corpus, k: int = 5) -> dict[str, float]:
    """Each head's k-fold accuracy on the corpus (argmax, before the yes threshold)."""
    xs = await features_of(embedder, [s.text for s in corpus.sentences])
    out = {name: _cv(xs, y, classes, k) for name, (y, classes) in _targets(corpus).items()}
    xr = await features_of(embedder, [r.reply for r in corpus.replies])
    out["answer"] = _cv(xr, [r.label for r in corpus.replies], REPLIES, k)
    return {name: round(acc, 3) for name, acc in out.items()}
