"""`python -m factledger.bench.judgement.bar [--dev DIR ...] [--top N]`: what sets the answer
judge's zero-false-yes bar, and the bar that vetoes leave (ADR 0124).

Reads the lab's kept-out pairs (`answers.kept_out`: one question in five, with all its replies,
of every labelled file of the packaged corpus) and each `--dev` half with every reader
(`vetoes.signals`), then prints, as JSON:

- per veto set (`VETO_SETS`): the tuned reader's bar fitted on the kept-out pairs with those
  vetoes, and the share of yeses accepted and false yeses at that bar on each set;
- the kept-out and dev non-yeses that read surest as a yes (the ones that set the bar) and
  the yeses that fall under it, with every reader's reading, for classifying by hand.

A held-out half is refused: it is scored once, through the scorer's aggregates only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.evalsets.cases import load_answers
from factledger.bench.judgement.answers import kept_out, pairs_in
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.vetoes import Signals, Vetoes, bar, said_yes, signals

SHIPPED_BAR = 0.821  # the packaged file's own threshold (ADR 0105)
VETO_SETS = {
    "tuned_alone": Vetoes(reply_head_min=None, tentative=False, asks_back=False, parts=False),
    "tuned_alone_vetoed": Vetoes(reply_head_min=None),
    "with_reply_head": Vetoes(tentative=False, asks_back=False, parts=False),
    "with_reply_head_vetoed": Vetoes(),
}


@dataclass(frozen=True, slots=True)
class Pair:
    source: str
    question: str
    reply: str
    label: str


def kept_out_pairs() -> list[Pair]:
    every = pairs_in([PACKAGED_CORPUS])
    return [Pair("kept_out", p.question, p.reply, p.label) for p in every if kept_out(p)]


def dev_pairs(directory: Path) -> list[Pair]:
    if directory.name == "heldout":
        raise ValueError("a held-out half is scored through the scorer's aggregates only")
    name = directory.parent.name
    return [Pair(name, a.question, a.reply, a.label) for a in load_answers(directory)]


def rows(s: Signals, at: np.ndarray) -> Signals:
    return Signals(*(getattr(s, f)[at] for f in Signals.__slots__))


def figures(s: Signals, labels: Sequence[str], vetoes: Vetoes, yes_min: float) -> dict[str, float]:
    y = np.array(labels) == "yes"
    said = said_yes(s, vetoes, yes_min)
    return {
        "yes_accepted": round(float((said & y).sum()) / max(int(y.sum()), 1), 3),
        "false_yes": float((said & ~y).sum()),
    }


def listing(pairs: Sequence[Pair], s: Signals, at: np.ndarray) -> list[dict[str, object]]:
    return [
        {
            "tuned_yes": round(float(s.tuned[i, 0]), 3),
            "reply_head_yes": round(float(s.reply_head[i, 0]), 3),
            "asks_back": round(float(s.asks_back[i]), 2),
            "tentative": round(float(s.tentative[i]), 2),
            "parts_yes": round(float(s.parts_yes[i]), 3),
            "label": pairs[i].label,
            "question": pairs[i].question,
            "reply": pairs[i].reply,
        }
        for i in at
    ]


def report(pairs: Sequence[Pair], s: Signals, top: int) -> dict[str, object]:
    sources = np.array([p.source for p in pairs])
    labels = np.array([p.label for p in pairs])
    held = np.flatnonzero(sources == "kept_out")
    out: dict[str, object] = {}
    for name, vetoes in {"shipped": VETO_SETS["with_reply_head"], **VETO_SETS}.items():
        yes_min = (
            SHIPPED_BAR if name == "shipped" else bar(rows(s, held), list(labels[held]), vetoes)
        )
        out[name] = {"yes_min": yes_min} | {
            str(src): figures(rows(s, at), list(labels[at]), vetoes, yes_min)
            for src in dict.fromkeys(sources)
            for at in [np.flatnonzero(sources == src)]
        }
    likeliest = s.tuned[:, 0] >= s.tuned[:, 1:].max(axis=1)
    for src in dict.fromkeys(sources):
        at = np.flatnonzero((sources == src) & (labels != "yes") & likeliest)
        out[f"surest_non_yes_{src}"] = listing(pairs, s, at[np.argsort(-s.tuned[at, 0])][:top])
        shipped = said_yes(s, VETO_SETS["with_reply_head"], SHIPPED_BAR)
        missed = np.flatnonzero((sources == src) & (labels == "yes") & ~shipped)
        out[f"missed_yes_{src}"] = listing(pairs, s, missed[np.argsort(-s.tuned[missed, 0])])
    return out


async def read(pairs: Sequence[Pair]) -> Signals:
    judge = LearnedJudge.packaged()
    return await signals(
        judge, TunedUseAnswerJudge.packaged(), [(p.question, p.reply) for p in pairs]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.bar")
    parser.add_argument("--dev", type=Path, action="append", default=[], help="a dev half")
    parser.add_argument("--top", type=int, default=15, help="how many surest non-yeses to list")
    args = parser.parse_args(argv)
    pairs = kept_out_pairs() + [p for d in args.dev for p in dev_pairs(d)]
    done = report(pairs, asyncio.run(read(pairs)), args.top)
    sys.stdout.write(json.dumps(done, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
