"""`python -m factledger.bench.judgement.ngram_candidate [--corpus DIR ...] --out FILE`: the
character n-gram answer reader as a second reader whose yes is required (ADR 0140, lab only).

Trains the reader (`ngram_reader.py`) on the training split of every writer's
`replies-*.yaml`, reads the kept-out split (`answers.kept_out`) with it, the packaged tuned
reader and the English reply-only head, and fits two candidates' bars there only:

- **A**: a yes needs the tuned reader's yes and the n-gram reader's (in place of the English
  reply-only head);
- **B**: a yes needs the tuned reader's, the English reply-only head's and the n-gram
  reader's.

Each pair of bars (`fit_bars`) is the one over a grid at which no kept-out non-yes reads as
a yes and the most kept-out yeses are accepted. Writes the reader and the bars to FILE and
prints the kept-out figures (per language group where the items name one) and FILE's SHA-256.
The scorer reads a candidate with `lines --ngram FILE --ngram-candidate A|B`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.cross_answers import decide
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.answers import LabelledPair, kept_out, pairs_in
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.ngram_reader import NgramReader
from factledger.bench.judgement.vetoes import packaged_readings

Mask = npt.NDArray[np.bool_]
GRID = tuple(round(0.5 + 0.01 * i, 2) for i in range(50))  # 0.50 to 0.99
REPLY_FILES = ("replies-*.yaml",)
CANDIDATES = {"A": False, "B": True}  # whether the English reply-only head must agree too


def reads_yes(p: Matrix, bar: float) -> Mask:
    """Rows whose yes is the likeliest class and at least `bar`."""
    out: Mask = (p[:, 0] >= bar) & (p[:, 0] >= p[:, 1:].max(axis=1))
    return out


@dataclass(frozen=True, slots=True)
class Bars:
    tuned: float
    ngram: float
    yes_accepted: float = 0.0


def fit_bars(tuned: Matrix, ngram: Matrix, labels: Sequence[str], allowed: Mask) -> Bars:
    """The two bars, over `GRID` each, at which no non-yes of `labels` that `allowed` lets
    through reads as a yes of both readers, accepting the most yeses (ties: the higher bars)."""
    y = np.array(labels) == "yes"
    best = Bars(1.0, 1.0, 0.0)
    for t in reversed(GRID):
        tuned_yes = reads_yes(tuned, t) & allowed
        for n in reversed(GRID):
            said = tuned_yes & reads_yes(ngram, n)
            if (said & ~y).any():
                break  # a lower n-gram bar only lets more through
            accepted = float((said & y).sum()) / max(int(y.sum()), 1)
            if accepted > best.yes_accepted:
                best = Bars(t, n, round(accepted, 3))
    return best


@dataclass(frozen=True, slots=True)
class Readings:
    tuned: Matrix  # yes, no, neither
    ngram: Matrix
    reply_head_yes: Mask  # the English reply-only head's yes at its own bar


async def readings(
    judge: LearnedJudge,
    tuned: TunedUseAnswerJudge,
    reader: NgramReader,
    pairs: Sequence[tuple[str, str]],
) -> Readings:
    pt, rh, _ = await packaged_readings(judge, tuned, pairs)
    return Readings(pt, reader.probabilities(pairs), reads_yes(rh, judge.heads.yes_min))


def said_yes(r: Readings, bars: Bars, *, with_reply_head: bool) -> Mask:
    said = reads_yes(r.tuned, bars.tuned) & reads_yes(r.ngram, bars.ngram)
    out: Mask = said & r.reply_head_yes if with_reply_head else said
    return out


@dataclass(frozen=True, slots=True)
class NgramCandidate:
    """A candidate judge: a yes needs the tuned reader's and the n-gram reader's (and, for B,
    the English reply-only head's); otherwise the tuned reader's reading (a no declines,
    anything else is neither)."""

    judge: LearnedJudge
    tuned: TunedUseAnswerJudge
    reader: NgramReader
    bars: Bars
    with_reply_head: bool

    @classmethod
    def load(cls, path: Path, candidate: str) -> NgramCandidate:
        reader, bars = NgramReader.load(path)
        key = candidate.lower()
        chosen = Bars(bars[f"tuned_{key}"], bars[f"ngram_{key}"])
        judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
        return cls(judge, tuned, reader, chosen, CANDIDATES[candidate])

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        if not pairs:
            return []
        r = await readings(self.judge, self.tuned, self.reader, pairs)
        yes = said_yes(r, self.bars, with_reply_head=self.with_reply_head)
        read = decide(r.tuned, 1.01)
        return [Reply.YES if y else x for y, x in zip(yes, read, strict=True)]


def figures(said: Mask, pairs: Sequence[LabelledPair]) -> dict[str, object]:
    y = np.array([p.label for p in pairs]) == "yes"
    out: dict[str, object] = {
        "yes_accepted": round(float((said & y).sum()) / max(int(y.sum()), 1), 3),
        "false_yes": int((said & ~y).sum()),
    }
    for group, english in (("en", True), ("not_en", False)):
        rows = [i for i, p in enumerate(pairs) if p.language and (p.language == "en") is english]
        yes_rows = [i for i in rows if y[i]]
        out[group] = round(float(said[yes_rows].sum()) / max(len(yes_rows), 1), 3)
    return out


def train(corpora: Sequence[Path], out: Path) -> dict[str, object]:
    every = pairs_in(corpora, REPLY_FILES)
    training = [p for p in every if not kept_out(p)]
    held = [p for p in every if kept_out(p)]
    reader = NgramReader.fit(training)
    judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
    r = asyncio.run(readings(judge, tuned, reader, [(p.question, p.reply) for p in held]))
    labels = [p.label for p in held]
    everywhere = np.ones(len(held), dtype=bool)
    fitted = {
        name: fit_bars(r.tuned, r.ngram, labels, r.reply_head_yes if needs else everywhere)
        for name, needs in CANDIDATES.items()
    }
    bars = {
        f"{part}_{name.lower()}": getattr(b, part)
        for name, b in fitted.items()
        for part in ("tuned", "ngram")
    }
    reader.save(out, **bars)
    packaged = reads_yes(r.tuned, tuned.tuned.yes_min) & r.reply_head_yes
    return {
        "training_pairs": len(training),
        "kept_out_pairs": len(held),
        "kept_out_yeses": labels.count("yes"),
        "packaged_judge": figures(packaged, held),
        "candidates": {
            name: {"tuned_bar": b.tuned, "ngram_bar": b.ngram}
            | figures(said_yes(r, b, with_reply_head=CANDIDATES[name]), held)
            for name, b in fitted.items()
        },
        "out": str(out),
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
    }


def corpus_command(
    prog: str, run: Callable[[Sequence[Path], Path], dict[str, object]], argv: list[str] | None
) -> None:
    """A lab command that trains on corpus directories (the packaged one by default), writes
    `--out` and prints its figures as JSON."""
    parser = argparse.ArgumentParser(prog=f"python -m {prog}")
    parser.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    done = run(args.corpus or [PACKAGED_CORPUS], args.out)
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


def main(argv: list[str] | None = None) -> None:
    corpus_command("factledger.bench.judgement.ngram_candidate", train, argv)


if __name__ == "__main__":
    main()
