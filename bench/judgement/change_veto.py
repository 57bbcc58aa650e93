"""`python -m factledger.bench.judgement.change_veto [--corpus DIR ...] [--floor P ...]`: where the
change reader reads the packaged judge's out-of-writer false yeses, and a veto trained only on
the pairs the tuned reader reads as a yes (ADR 0149, training writers only).

Each writer is read by a change reader (with the question-part feature) trained on the other
writers' pairs that the packaged tuned reader never trained on; with `--floor P` the reader is
trained only on those pairs that the tuned reader reads as a yes at P or above (the population
a veto sees). Prints, as JSON, the packaged judge's false yeses with their change reading, the
share of its true yeses read above the surest of them, and both candidates' bars fitted there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.evalsets.cases import Answer
from factledger.bench.judgement.change_reader import (
    CANDIDATES,
    Read,
    as_three,
    fit,
    honest_pairs,
    item,
    read,
)
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.ngram_candidate import Mask, fit_bars, reads_yes

SHIPPED_TUNED_BAR = 0.821


def out_of_writer_p(r: Read, labels: Sequence[str], writer: Sequence[str], train: Mask) -> Matrix:
    """Each writer's change reading by a reader trained on the other writers' `train` rows."""
    w, lab = np.array(writer), np.array(labels)
    p: Matrix = np.zeros(len(lab), dtype=np.float32)
    for name in dict.fromkeys(writer):
        rows = w == name
        head = fit(r.x[~rows & train], list(lab[~rows & train]))
        p[rows] = head.probabilities(r.x[rows])[:, head.column("yes")]
    return p


def false_yes_readings(
    said: Mask, y: Mask, p: Matrix, pairs: Sequence[Answer], writer: Sequence[str]
) -> dict[str, object]:
    """The false yeses of `said`, surest change reading first, and how many of its true yeses
    the change reader reads above the surest of them."""
    bad = [int(i) for i in np.flatnonzero(said & ~y)]
    bad.sort(key=lambda i: -float(p[i]))
    top = float(p[bad[0]]) if bad else 0.0
    true = p[said & y]
    return {
        "true_yes_median": round(float(np.median(true)), 3) if true.size else 0.0,
        "true_yes_above_surest_false_yes": round(float((true > top).mean()), 3)
        if true.size
        else 0.0,
        "false_yes": [
            {"writer": writer[i], "change": round(float(p[i]), 3), "reply": pairs[i].reply}
            for i in bad
        ],
    }


def run(corpora: Sequence[Path], floors: Sequence[float]) -> dict[str, object]:
    judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
    by = honest_pairs(corpora)
    pairs = [a for ps in by.values() for a in ps]
    writer = [w for w, ps in by.items() for _ in ps]
    labels = [a.label for a in pairs]
    fields = sorted({a.field for a in pairs})
    r = asyncio.run(read(judge, tuned, [item(a) for a in pairs], fields, with_parts=True))
    y = np.array(labels) == "yes"
    packaged = reads_yes(r.tuned, SHIPPED_TUNED_BAR) & r.reply_head_yes
    report: dict[str, object] = {"pairs": len(pairs), "yeses": int(y.sum())}
    for floor in (None, *floors):
        train = np.ones(len(y), dtype=bool) if floor is None else reads_yes(r.tuned, floor)
        p = out_of_writer_p(r, labels, writer, train)
        bars: dict[str, dict[str, float]] = {}
        for name, needs in CANDIDATES.items():
            allowed = r.reply_head_yes if needs else np.ones(len(y), dtype=bool)
            b = fit_bars(r.tuned, as_three(p), labels, allowed)
            bars[name] = {"tuned": b.tuned, "change": b.ngram, "yes_accepted": b.yes_accepted}
        report["every pair" if floor is None else f"tuned yes at {floor} or above"] = {
            "trained_non_yes": int((train & ~y).sum()),
            "bars": bars,
            "packaged_judge": false_yes_readings(packaged, y, p, pairs, writer),
        }
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.change_veto")
    parser.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    parser.add_argument("--floor", type=float, action="append", default=[])
    args = parser.parse_args(argv)
    done = run(args.corpus or [PACKAGED_CORPUS], args.floor)
    sys.stdout.write(json.dumps(done, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
