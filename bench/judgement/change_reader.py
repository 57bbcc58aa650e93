"""`python -m factledger.bench.judgement.change_reader --out FILE [--corpus DIR ...] [--parts]`:
a reader of the reply against the change it answers, as a veto on the tuned reader's yes (ADR
0144; `--parts` adds the reply's reading against the question's asked part, ADR 0149).

Each writer of the corpus (`replies-<writer>-NN.yaml`) is read by a change reader trained on
the other writers; only pairs the packaged tuned reader never trained on are read or trained
on (its kept-out split of writers c and d, every pair of the others). The two candidates'
bars (C: the tuned reader's yes and the change reader's; D: and the English reply-only
head's) are fitted on those out-of-writer readings pooled; the reader written to FILE is
trained on all of them. Prints the figures as JSON; the scorer reads a candidate with
`lines --change FILE --change-candidate C|D`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.cross_answers import decide
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import Head
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.evalsets.cases import Answer, parse_answers
from factledger.bench.judgement.answers import LabelledPair, kept_out
from factledger.bench.judgement.change_features import ChangeItem, change_features
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.ngram_candidate import (
    GRID,
    Mask,
    fit_bars,
    reads_yes,
)
from factledger.bench.judgement.ngram_writers import TUNED_WRITERS, WRITER, rates
from factledger.bench.judgement.vetoes import packaged_readings

CLASSES = ("yes", "other")
CANDIDATES = {"C": False, "D": True}  # whether the English reply-only head must agree too
VETO_BARS = (0.5, 0.7, 0.9)


def honest_pairs(corpora: Sequence[Path]) -> dict[str, list[Answer]]:
    """Each writer's pairs that the packaged tuned reader was not trained on."""
    out: dict[str, list[Answer]] = {}
    for directory in corpora:
        for path in sorted(directory.glob("replies-*.yaml")):
            match = WRITER.search(path.name)
            if match is None:
                continue
            w = match.group(1)
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
            out.setdefault(w, []).extend(
                a
                for a in parse_answers(raw)
                if w not in TUNED_WRITERS or kept_out(LabelledPair(a.question, a.reply, a.label))
            )
    return out


def item(a: Answer) -> ChangeItem:
    return ChangeItem(a.question, a.reply, a.field, a.value)


@dataclass(frozen=True, slots=True)
class Read:
    tuned: Matrix
    reply_head_yes: Mask
    x: Matrix


async def read(
    judge: LearnedJudge,
    tuned: TunedUseAnswerJudge,
    items: Sequence[ChangeItem],
    fields: list[str],
    *,
    with_parts: bool,
) -> Read:
    pt, rh, _ = await packaged_readings(judge, tuned, [(i.question, i.reply) for i in items])
    readers = np.hstack([pt, rh])
    x = await change_features(judge.embedder, items, fields, readers, with_parts=with_parts)
    return Read(pt, reads_yes(rh, judge.heads.yes_min), x)


def as_three(p_yes: Matrix) -> Matrix:
    out: Matrix = np.stack([p_yes, 1.0 - p_yes, np.zeros_like(p_yes)], axis=1)
    return out


def fit(x: Matrix, labels: Sequence[str]) -> Head:
    return fit_head(x, ["yes" if label == "yes" else "other" for label in labels], CLASSES)


def said_yes(r: Read, head: Head, bars: tuple[float, float], *, with_reply_head: bool) -> Mask:
    p = head.probabilities(r.x)[:, head.column("yes")]
    said = reads_yes(r.tuned, bars[0]) & (p >= bars[1])
    out: Mask = said & r.reply_head_yes if with_reply_head else said
    return out


def out_of_writer(
    corpora: Sequence[Path], out: Path, *, with_parts: bool = False
) -> dict[str, object]:
    judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
    by = honest_pairs(corpora)
    every = [a for pairs in by.values() for a in pairs]
    fields = sorted({a.field for a in every})
    items = [item(a) for a in every]
    r = asyncio.run(read(judge, tuned, items, fields, with_parts=with_parts))
    labels = np.array([a.label for a in every])
    writer = np.array([w for w, pairs in by.items() for _ in pairs])
    p = np.zeros(len(every), dtype=np.float32)
    for w in by:
        rows = writer == w
        head = fit(r.x[~rows], list(labels[~rows]))
        p[rows] = head.probabilities(r.x[rows])[:, head.column("yes")]
    y = labels == "yes"
    packaged = reads_yes(r.tuned, tuned.tuned.yes_min) & r.reply_head_yes
    report: dict[str, object] = {"pairs": len(every), "yeses": int(y.sum()), "parts": with_parts}
    report["packaged_judge"] = rates(packaged, y) | {
        w: rates(packaged[writer == w], y[writer == w]) for w in by
    }
    bars: dict[str, float] = {}
    for name, needs in CANDIDATES.items():
        allowed = r.reply_head_yes if needs else np.ones(len(y), dtype=bool)
        b = fit_bars(r.tuned, as_three(p), list(labels), allowed)
        said = reads_yes(r.tuned, b.tuned) & (p >= b.ngram) & allowed
        bars |= {f"tuned_{name.lower()}": b.tuned, f"change_{name.lower()}": b.ngram}
        report[f"candidate_{name}"] = (
            {"tuned_bar": b.tuned, "change_bar": b.ngram}
            | rates(said, y)
            | {w: rates(said[writer == w], y[writer == w]) for w in by}
        )
    report["packaged_judge_with_change_veto"] = veto_only(packaged, p, y) | {
        f"at_{bar}": rates(packaged & (p >= bar), y) for bar in VETO_BARS
    }
    head = fit(r.x, list(labels))
    save(out, head, fields, bars, with_parts=with_parts)
    report |= {"out": str(out), "sha256": hashlib.sha256(out.read_bytes()).hexdigest()}
    return report


def veto_only(packaged: Mask, p: Matrix, y: Mask) -> dict[str, float]:
    """The packaged judge with the change reader's yes required at the lowest bar of the
    grid that leaves no false yes (a veto: it can only remove yeses)."""
    for bar in GRID:
        said = packaged & (p >= bar)
        if not (said & ~y).any():
            return {"change_bar": bar} | rates(said, y)
    return {"change_bar": 1.0} | rates(packaged & (p > 1.0), y)


def save(
    path: Path, head: Head, fields: Sequence[str], bars: dict[str, float], *, with_parts: bool
) -> None:
    with path.open("wb") as f:
        np.savez(
            f,
            weights=head.weights,
            bias=head.bias,
            fields=np.array(fields),
            bars=np.array(json.dumps(bars)),
            parts=np.array(with_parts),
        )


@dataclass(frozen=True, slots=True)
class ChangeCandidate:
    """A candidate judge given the change: a yes needs the tuned reader's yes and the change
    reader's (and, for D, the English reply-only head's); otherwise the tuned reader's
    reading (a no declines, anything else is neither)."""

    judge: LearnedJudge
    tuned: TunedUseAnswerJudge
    head: Head
    fields: list[str]
    bars: tuple[float, float]
    with_reply_head: bool
    with_parts: bool = False

    @classmethod
    def load(cls, path: Path, candidate: str) -> ChangeCandidate:
        with np.load(path) as z:
            head = Head(z["weights"], z["bias"], CLASSES)
            fields = [str(f) for f in z["fields"]]
            fitted = json.loads(str(z["bars"]))
            # files of ADR 0144 were written before the question-part feature
            with_parts = bool(z["parts"]) if "parts" in z.files else False
        key = candidate.lower()
        bars = (float(fitted[f"tuned_{key}"]), float(fitted[f"change_{key}"]))
        judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
        return cls(judge, tuned, head, fields, bars, CANDIDATES[candidate], with_parts)

    async def answers_about(self, items: Sequence[ChangeItem]) -> list[Reply]:
        if not items:
            return []
        r = await read(self.judge, self.tuned, items, self.fields, with_parts=self.with_parts)
        yes = said_yes(r, self.head, self.bars, with_reply_head=self.with_reply_head)
        return [Reply.YES if y else x for y, x in zip(yes, decide(r.tuned, 1.01), strict=True)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.change_reader")
    parser.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--parts",
        action="store_true",
        help="also read the reply against the question's asked part (ADR 0149)",
    )
    args = parser.parse_args(argv)
    done = out_of_writer(args.corpus or [PACKAGED_CORPUS], args.out, with_parts=args.parts)
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
