"""`python -m factledger.bench.judgement.ngram_writers --bars FILE [--corpus DIR ...]`: the
character n-gram reader read on a writer it never read (ADR 0140, lab only).

For each training writer (the letter in `replies-<writer>-NN.yaml`), the n-gram reader is
trained on the other writers' training split and reads this writer's pairs that the packaged
tuned reader never saw either (its kept-out split; every pair of a writer the tuned reader was
not trained on, `--tuned-writers`). Prints, as JSON:

- per writer: the packaged judge's yes accepted and false yeses, and candidate A's at the bars
  in FILE (as `ngram_candidate` fitted them on kept-out questions of writers it had read);
- pooled over the writers: both candidates' bars fitted there, the packaged judge at its own
  bar and at a tuned bar fitted there, and the packaged judge with the n-gram reader's yes
  required at a few bars (a veto that can only remove yeses).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.judgement.answers import LabelledPair, kept_out, pairs_in
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.ngram_candidate import (
    CANDIDATES,
    Bars,
    Mask,
    Readings,
    fit_bars,
    readings,
    reads_yes,
    said_yes,
)
from factledger.bench.judgement.ngram_reader import NgramReader

WRITER = re.compile(r"replies-([a-z])-\d+\.yaml$")
TUNED_WRITERS = "cd"  # the shipped tuned reader's training files (ADR 0109)
VETO_BARS = (0.5, 0.6, 0.7, 0.8)


def writers(corpora: Sequence[Path]) -> list[str]:
    found = {
        m.group(1)
        for d in corpora
        for p in d.glob("replies-*.yaml")
        if (m := WRITER.search(p.name))
    }
    return sorted(found)


def rates(said: Mask, y: Mask) -> dict[str, float]:
    return {
        "yes_accepted": round(float((said & y).sum()) / max(int(y.sum()), 1), 3),
        "false_yes": float((said & ~y).sum()),
    }


def _join(parts: Sequence[Readings]) -> Readings:
    return Readings(
        np.vstack([r.tuned for r in parts]),
        np.vstack([r.ngram for r in parts]),
        np.concatenate([r.reply_head_yes for r in parts]),
    )


def out_of_writer(
    corpora: Sequence[Path], fitted: dict[str, float], tuned_writers: str
) -> dict[str, object]:
    judge, tuned = LearnedJudge.packaged(), TunedUseAnswerJudge.packaged()
    by = {w: pairs_in(corpora, (f"replies-{w}-*.yaml",)) for w in writers(corpora)}
    at_a = Bars(fitted["tuned_a"], fitted["ngram_a"])
    parts: list[Readings] = []
    labels: list[LabelledPair] = []
    out: dict[str, object] = {}
    for w, pairs in by.items():
        held = [p for p in pairs if kept_out(p) or w not in tuned_writers]
        training = [p for v, other in by.items() if v != w for p in other if not kept_out(p)]
        reader = NgramReader.fit(training)
        r = asyncio.run(readings(judge, tuned, reader, [(p.question, p.reply) for p in held]))
        y = np.array([p.label == "yes" for p in held])
        packaged = reads_yes(r.tuned, tuned.tuned.yes_min) & r.reply_head_yes
        out[w] = {
            "pairs": len(held),
            "yeses": int(y.sum()),
            "packaged_judge": rates(packaged, y),
            "candidate_A_at_its_bars": rates(said_yes(r, at_a, with_reply_head=False), y),
        }
        parts.append(r)
        labels += held
    r = _join(parts)
    names = [p.label for p in labels]
    y = np.array(names) == "yes"
    packaged = reads_yes(r.tuned, tuned.tuned.yes_min) & r.reply_head_yes
    pooled: dict[str, object] = {"pairs": len(names), "yeses": int(y.sum())}
    for name, needs in CANDIDATES.items():
        b = fit_bars(r.tuned, r.ngram, names, r.reply_head_yes if needs else np.ones(len(y), bool))
        said = said_yes(r, b, with_reply_head=needs)
        pooled[f"candidate_{name}_bars_fitted_here"] = {
            "tuned_bar": b.tuned,
            "ngram_bar": b.ngram,
            **rates(said, y),
        }
    pooled["packaged_judge"] = rates(packaged, y)
    # The packaged readers with the tuned bar fitted here too (the n-gram reader left out).
    sure = np.tile(np.array([[1.0, 0.0, 0.0]], dtype=np.float32), (len(y), 1))
    alone = fit_bars(r.tuned, sure, names, r.reply_head_yes)
    pooled["packaged_judge_tuned_bar_fitted_here"] = {"tuned_bar": alone.tuned} | rates(
        reads_yes(r.tuned, alone.tuned) & r.reply_head_yes, y
    )
    for bar in VETO_BARS:
        pooled[f"packaged_judge_with_ngram_yes_at_{bar}"] = rates(
            packaged & reads_yes(r.ngram, bar), y
        )
    out["pooled"] = pooled
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.ngram_writers")
    parser.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    parser.add_argument("--bars", type=Path, required=True, help="a file ngram_candidate wrote")
    parser.add_argument("--tuned-writers", default=TUNED_WRITERS)
    args = parser.parse_args(argv)
    _, fitted = NgramReader.load(args.bars)
    done = out_of_writer(args.corpus or [PACKAGED_CORPUS], fitted, args.tuned_writers)
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
