"""Fits the pair answer head (`adapters/judgement/pair_answers.py`) over the multilingual
encoder on the labelled (question, reply) pairs of one or more directories (`replies-*.yaml`
and `answers-*.yaml` items in the blind sets' format: change, question, reply, label), and
chooses its yes threshold out of fold: the lowest at which no pair that is not a yes reads
as one when scored by a head that never saw it. Prints the out-of-fold figures at that
threshold, per language group where the items name their language, and the file's SHA-256
to pin. The replies of `answers.yaml` carry no question, so they train nothing here.

Numpy only: a deployment refits it from its own labelled replies without torch.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import yaml

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.pair_answers import CLASSES, HEAD, embed_pairs
from factledger.application.memory.ports import Embedder
from factledger.bench.evalsets.cases import parse_answers
from factledger.bench.judgement.fit import fit_head

FOLDS = 5
KEPT_OUT = 5  # the lab's fine-tuned readers keep one question in five out
BUCKETS = 2048
L2 = 1e-3
# Below even odds a yes is never the surest reading of three; the threshold never goes lower.
YES_FLOOR = 0.5

npt_bool = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class LabelledPair:
    question: str
    reply: str
    label: str
    language: str | None = None


PAIR_FILES = ("replies-*.yaml", "answers-*.yaml")


def pairs_in(directories: Sequence[Path], files: Sequence[str] = PAIR_FILES) -> list[LabelledPair]:
    """The labelled pairs of the files matching `files` in each directory."""
    out: list[LabelledPair] = []
    for directory in directories:
        for pattern in files:
            for path in sorted(directory.glob(pattern)):
                raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
                languages = [r.get("language") for r in raw]
                out += [
                    LabelledPair(a.question, a.reply, a.label, None if lang is None else str(lang))
                    for a, lang in zip(parse_answers(raw), languages, strict=True)
                ]
    return out


def kept_out(pair: LabelledPair) -> bool:
    """One question in five, with all its replies (by a hash of the question's text): a
    question met in training would make the kept-out figures look better than unseen pairs'
    are."""
    return int(hashlib.sha256(pair.question.encode()).hexdigest()[:8], 16) % KEPT_OUT == 0


def out_of_fold(x: Matrix, labels: Sequence[str], folds: int = FOLDS) -> Matrix:
    """Each pair's probabilities (yes, no, neither) from a head fitted on the other folds
    (folds drawn by a seeded shuffle, so a run is repeatable)."""
    order = np.random.default_rng(7).permutation(len(labels))
    y = np.array(labels)
    p = np.zeros((len(labels), len(CLASSES)), dtype=np.float32)
    for fold in range(min(folds, len(labels))):
        test = order[fold::folds]
        train = np.setdiff1d(np.arange(len(labels)), test)
        head = fit_head(x[train], list(y[train]), CLASSES, L2)
        p[test] = head.probabilities(x[test])[:, [head.column(c) for c in CLASSES]]
    return p


def said_yes(p: Matrix, threshold: float) -> npt_bool:
    """Which rows the judge reads as a yes at `threshold` (as `PairAnswerJudge` decides)."""
    mask: npt_bool = (p[:, 0] >= threshold) & (p[:, 0] >= p[:, 1:].max(axis=1))
    return mask


def yes_threshold(p: Matrix, labels: Sequence[str]) -> float:
    """The lowest threshold (three decimals) above every pair's yes probability that is not
    a yes and would otherwise read as one."""
    y = np.array(labels)
    surest = p[:, 0] >= p[:, 1:].max(axis=1)
    others = p[(y != "yes") & surest, 0]
    highest = float(others.max()) if len(others) else 0.0
    return max(YES_FLOOR, math.floor(highest * 1000 + 1) / 1000)


def figures(p: Matrix, labels: Sequence[str], threshold: float) -> dict[str, float]:
    y = np.array(labels)
    said = said_yes(p, threshold)
    yeses = int((y == "yes").sum())
    return {
        "pairs": float(len(y)),
        "yeses": float(yeses),
        "yes_accepted": round(float((said & (y == "yes")).sum()) / max(yeses, 1), 3),
        "false_yes": float((said & (y != "yes")).sum()),
        "accuracy": round(float((np.array(CLASSES)[p.argmax(axis=1)] == y).mean()), 3)
        if len(y)
        else 0.0,
    }


def kept_out_scores(p: Matrix, pairs: Sequence[LabelledPair]) -> dict[str, object]:
    """A reading's zero-false-yes threshold on `pairs`, and its figures there."""
    labels = [x.label for x in pairs]
    threshold = yes_threshold(p, labels)
    return {
        "yes_min": threshold,
        **figures(p, labels, threshold),
        "by_language": by_language(p, pairs, threshold),
    }


def by_language(
    p: Matrix, pairs: Sequence[LabelledPair], threshold: float
) -> dict[str, dict[str, float]]:
    """The figures for English pairs and for the others, where the items name a language."""
    named = [i for i, pair in enumerate(pairs) if pair.language is not None]
    out = {}
    for group, keep in (("en", True), ("not_en", False)):
        rows = [i for i in named if (pairs[i].language == "en") is keep]
        if rows:
            out[group] = figures(p[rows], [pairs[i].label for i in rows], threshold)
    return out


async def train_answer_head(
    embedder: Embedder, directories: Sequence[Path], out: Path
) -> dict[str, object]:
    pairs = pairs_in(directories)
    if not pairs:
        raise ValueError("no labelled (question, reply) pairs in the corpus directories")
    labels = [p.label for p in pairs]
    x = await embed_pairs(embedder, [(p.question, p.reply) for p in pairs], BUCKETS)
    p = out_of_fold(x, labels)
    threshold = yes_threshold(p, labels)
    head = fit_head(x, labels, CLASSES, L2)
    heads = Heads({HEAD: head}, embedder.model_id, BUCKETS, threshold)
    return {
        "pairs": len(pairs),
        "yes_min": threshold,
        "out_of_fold": figures(p, labels, threshold),
        "out_of_fold_by_language": by_language(p, pairs, threshold),
        "out": str(out),
        "sha256": heads.save(out),
    }
