"""Fits the candidate answer head (`answer_head.py`) over the packaged embedder on the
replies of one or more corpus directories (`answers.yaml` groups, `answers-*.yaml` and
`replies-*.yaml` items),
and chooses its yes threshold out of fold: the lowest at which no reply that is not a yes
reads as one when scored by a head that never saw it. Prints the out-of-fold figures at that
threshold and the file's SHA-256 to pin."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Heads
from factledger.application.memory.ports import Embedder
from factledger.bench.evalsets.cases import parse_answers
from factledger.bench.judgement.answer_head import HEAD, reply_features
from factledger.bench.judgement.corpus import REPLIES, LabelledReply, load_corpus
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.train import BUCKETS

FOLDS = 5
# Below even odds a yes is never the surest reading of three; the threshold never goes lower.
YES_FLOOR = 0.5


def replies_in(directories: Sequence[Path]) -> list[LabelledReply]:
    """A directory's corpus replies and its `replies-*.yaml` (items in the blind sets' format,
    which the judgement heads' own `train` command does not read, so refitting those heads
    leaves the answer head they carry as it was)."""
    out: list[LabelledReply] = []
    for directory in directories:
        out += load_corpus(directory).replies
        for path in sorted(directory.glob("replies-*.yaml")):
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
            out += [LabelledReply(a.reply, a.label) for a in parse_answers(raw)]
    return out


def out_of_fold_yes(x: Matrix, labels: Sequence[str], folds: int = FOLDS) -> Matrix:
    """Each reply's probability of a yes from a head fitted on the other folds (folds drawn
    by a seeded shuffle, so a run is repeatable)."""
    order = np.random.default_rng(7).permutation(len(labels))
    y = np.array(labels)
    p = np.zeros(len(labels), dtype=np.float32)
    for fold in range(folds):
        test = order[fold::folds]
        train = np.setdiff1d(np.arange(len(labels)), test)
        head = fit_head(x[train], list(y[train]), REPLIES)
        p[test] = head.probabilities(x[test])[:, head.column("yes")]
    return p


def yes_threshold(p_yes: Matrix, labels: Sequence[str]) -> float:
    """The lowest threshold (three decimals) above every reply's p that is not a yes."""
    others = [float(p) for p, label in zip(p_yes, labels, strict=True) if label != "yes"]
    highest = max(others, default=0.0)
    return max(YES_FLOOR, math.floor(highest * 1000 + 1) / 1000)


def figures(p_yes: Matrix, labels: Sequence[str], threshold: float) -> dict[str, float]:
    y = np.array(labels)
    said = p_yes >= threshold
    yeses = int((y == "yes").sum())
    return {
        "replies": float(len(y)),
        "yeses": float(yeses),
        "yes_accepted": round(float((said & (y == "yes")).sum()) / max(yeses, 1), 3),
        "false_yes": float((said & (y != "yes")).sum()),
    }


async def train_answer_head(
    embedder: Embedder, directories: Sequence[Path], out: Path
) -> dict[str, object]:
    replies = replies_in(directories)
    labels = [r.label for r in replies]
    x = await reply_features(embedder, [r.reply for r in replies], BUCKETS)
    p_yes = out_of_fold_yes(x, labels)
    threshold = yes_threshold(p_yes, labels)
    heads = Heads({HEAD: fit_head(x, labels, REPLIES)}, embedder.model_id, BUCKETS, threshold)
    return {
        "yes_min": threshold,
        "out_of_fold": figures(p_yes, labels, threshold),
        "out": str(out),
        "sha256": heads.save(out),
    }
