"""`python -m factledger.bench.judgement.answer_latency [--calls N]`: milliseconds per call of
the answer judges, one (question, reply) pair a call as the confirmation path asks, side by
side in one run: the tuned multilingual encoder alone and the packaged judge that reads with
it (a yes also needs the reply-only head's: ADR 0105, 0109), for the shipped file or each
`--tuned FILE`, the pair head (question and reply over the multilingual encoder), the
judgement heads' reply-only answer head and, with `--cross FILE`, a cross-encoder (question
and reply as one input, int8 ONNX; ADR 0087) and, with `--vetoes YES_MIN`, the packaged
readers with the vetoes of ADR 0124 and, with `--ngram FILE`, the character n-gram candidates of
ADR 0140 (A and B). Run it with `OMP_NUM_THREADS=1` (and
`taskset -c 0`) for one core's figure. Prints the median and 90th percentile of each."""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from factledger.adapters.judgement.cross_answers import CrossAnswerJudge
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.pair_answers import PairAnswerJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.ngram_candidate import NgramCandidate
from factledger.bench.judgement.vetoes import VetoedAnswers

# Written for this benchmark; any pair will do, what is timed is one pair a call.
PAIRS = (
    ("Is your delivery address still 14 Harbour Road?", "Yes, still the same."),
    ("¿Sigue con el plan básico?", "No, me cambié al premium."),
    ("Your renewal date is the 3rd of May?", "I'd have to look that up."),
    ("Vous êtes passé au tarif vert ?", "Oui, depuis janvier."),
)


async def _timed(
    call: Callable[[Sequence[tuple[str, str]]], Awaitable[list[Reply]]], calls: int
) -> dict[str, float]:
    await call([PAIRS[0]])  # loads and warms
    spent = []
    for i in range(calls):
        question, reply = PAIRS[i % len(PAIRS)]
        pair = (question, f"{reply} ({i})")  # a new text each call: no embedder cache helps
        start = time.perf_counter()
        await call([pair])
        spent.append((time.perf_counter() - start) * 1000)
    spent.sort()
    return {
        "median_ms": round(statistics.median(spent), 2),
        "p90_ms": round(spent[int(0.9 * (len(spent) - 1))], 2),
    }


async def run(
    calls: int,
    cross: Path | None = None,
    tuned: Sequence[Path] = (),
    vetoes: float | None = None,
    ngram: Path | None = None,
) -> dict[str, dict[str, float]]:
    judge = LearnedJudge.packaged()
    reply_only = LearnedJudge(judge.embedder, judge.heads)
    readers = {"": TunedUseAnswerJudge.packaged()} if not tuned else {}
    readers |= {f" {path.name}": TunedUseAnswerJudge.load(path, None) for path in tuned}
    out = {}
    for name, reader in readers.items():
        out[f"tuned_use{name}"] = await _timed(reader.answers, calls)
        packaged = LearnedJudge(judge.embedder, judge.heads, reader)
        out[f"packaged_judge{name}"] = await _timed(packaged.answers, calls)
    if vetoes is not None:
        vetoed = VetoedAnswers(judge, TunedUseAnswerJudge.packaged(), vetoes)
        out["vetoed_judge"] = await _timed(vetoed.answers, calls)
    if ngram is not None:
        for candidate in ("A", "B"):
            judged = NgramCandidate.load(ngram, candidate).answers
            out[f"ngram_candidate_{candidate}"] = await _timed(judged, calls)
    if cross is not None:
        out["cross_encoder"] = await _timed(CrossAnswerJudge.load(cross, None).answers, calls)
    out["pair_head"] = await _timed(PairAnswerJudge.packaged().answers, calls)
    out["reply_only_head"] = await _timed(reply_only.answers, calls)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.answer_latency")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--cross", type=Path, help="a cross-encoder ONNX file to time too")
    parser.add_argument(
        "--tuned",
        type=Path,
        action="append",
        default=[],
        help="a tuned encoder file in place of the shipped (repeat it to time several)",
    )
    parser.add_argument(
        "--vetoes",
        type=float,
        metavar="YES_MIN",
        help="time the packaged readers with the vetoes of ADR 0124 too (the tuned bar given)",
    )
    parser.add_argument(
        "--ngram", type=Path, metavar="FILE", help="time ADR 0140's n-gram candidates A and B too"
    )
    args = parser.parse_args(argv)
    done = asyncio.run(run(args.calls, args.cross, args.tuned, args.vetoes, args.ngram))
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
