"""`python -m factledger.bench.judgement.no_bar [--dev DIR ...]`: what a bar on the answer
judge's no would cost (issue 29; the product is not changed by it).

A no declines the change it answers, and a declined change's memory is withheld from recall.
The packaged tuned reader (`TunedUseAnswerJudge`) reads a no wherever no is likelier than
neither and yes is not the likeliest reading, however unsure. This fits a bar on the no as the
yes bar is fitted (ADR 0105): the lowest, to three decimals, above every kept-out pair of the
writers the shipped reader was trained on (C and D) that is not a no and reads as one. It
prints, as JSON, with no bar and at that bar: the nos declined and the false declines (yeses
and neithers read as a no) on those kept-out pairs, on every pair of the writers the reader
never read (E, I, R, S), and on each `--dev` half; with `--bars`, at each bar given too (the
trade's curve, ADR 0179). A held-out half is refused.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.evalsets.cases import load_answers
from factledger.bench.judgement.answers import LabelledPair, kept_out, pairs_in
from factledger.bench.judgement.corpus import PACKAGED_CORPUS

TRAINED_ON = "cd"  # the shipped tuned reader's writers (ADR 0105, 0133)
NEVER_READ = "eirs"
YES, NO, NEITHER = range(3)  # the reader's columns (`CLASSES`)


def reads_no(p: Matrix, bar: float = 0.0) -> np.ndarray:
    """Where the reader's reading is a no: yes not the likeliest, no at least neither, and no
    at least `bar` sure."""
    likeliest_yes = p[:, YES] >= p[:, [NO, NEITHER]].max(axis=1)
    return np.asarray((~likeliest_yes) & (p[:, NO] >= p[:, NEITHER]) & (p[:, NO] >= bar))


def no_bar(p: Matrix, labels: Sequence[str]) -> float:
    """The lowest bar (three decimals) above every pair that is not a no and reads as one."""
    wrong = reads_no(p) & (np.array(labels) != "no")
    highest = float(p[wrong, NO].max()) if wrong.any() else 0.0
    return math.floor(highest * 1000 + 1) / 1000


def figures(p: Matrix, labels: Sequence[str], bar: float) -> dict[str, int]:
    """The nos declined and the false declines at `bar`, with the counts they are out of."""
    y = np.array(labels)
    said = reads_no(p, bar)
    return {
        "nos": int((y == "no").sum()),
        "nos_declined": int((said & (y == "no")).sum()),
        "not_nos": int((y != "no").sum()),
        "false_declines": int((said & (y != "no")).sum()),
        "yeses_declined": int((said & (y == "yes")).sum()),
    }


def writers_pairs(writers: str, *, only_kept_out: bool) -> list[LabelledPair]:
    pairs = [p for w in writers for p in pairs_in([PACKAGED_CORPUS], (f"replies-{w}-*.yaml",))]
    return [p for p in pairs if kept_out(p)] if only_kept_out else pairs


def dev_pairs(directory: Path) -> list[LabelledPair]:
    if directory.name == "heldout":
        raise SystemExit("a held-out half is scored through the scorer's aggregates only")
    return [LabelledPair(a.question, a.reply, a.label) for a in load_answers(directory)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.no_bar")
    parser.add_argument("--dev", type=Path, action="append", default=[], help="a dev half")
    parser.add_argument(
        "--bars", type=float, nargs="*", default=[], help="more bars to read every set at"
    )
    args = parser.parse_args(argv)
    reader = TunedUseAnswerJudge.packaged()
    sets = {
        "kept_out_" + TRAINED_ON: writers_pairs(TRAINED_ON, only_kept_out=True),
        "writers_" + NEVER_READ: writers_pairs(NEVER_READ, only_kept_out=False),
        **{f"{d.parent.name}/{d.name}": dev_pairs(d) for d in args.dev},
    }
    read = {
        name: (reader.probabilities_sync([(x.question, x.reply) for x in pairs]), pairs)
        for name, pairs in sets.items()
    }
    fit_p, fit_pairs = read["kept_out_" + TRAINED_ON]
    bar = no_bar(fit_p, [x.label for x in fit_pairs])
    out: dict[str, object] = {"no_bar": bar}
    for name, (p, pairs) in read.items():
        labels = [x.label for x in pairs]
        out[name] = {
            "as_shipped": figures(p, labels, 0.0),
            "at_the_bar": figures(p, labels, bar),
            **{f"at_{other:g}": figures(p, labels, other) for other in args.bars},
        }
    sys.stdout.write(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
