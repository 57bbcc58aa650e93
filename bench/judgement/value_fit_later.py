"""`python -m factledger.bench.judgement.value_fit_later --head FILE [--head-sha256 HEX]
--out FILE (--fit-dev DIR ... [--lift L] | --as-packaged) [--first-bars KEEP ADMIT]`: a fitted
value-fit head (`value_fit --out`) with a later session's answers read its own way
(`LaterReading`); its regression, bank and verifier unchanged, and its first sessions' bars
too unless `--first-bars` sets them (ADR 0244). Either bars of their own (ADR 0242), chosen on
the answers they judge, or the packaged head's reading, its five weights and its bars (ADR
0243: a later session read as the product reads it, the new reading kept to first sessions;
the head's bank must be the packaged head's, so that the five numbers are the same).

In a later session the product asks the head only about the fields the subject holds nothing
of; there an answer is often a change of a value the product missed before, said against the
old one, and bars chosen on first sessions cut those first (ADR 0241). The lab does not replay
what the product held: it reads a field as held from the session after one of the case's
answers to it over its bar (the reader's bar: what the product would have proposed).

The answers: every session of the dev halves given (a held-out half is refused), read by the
packaged reader from `REACH` under each kind's bar and marked by the keywords of their
session's expected proposals, as `value_fit --fit-dev` marks a first session's; a head with a
span verifier reads fold zero alone (the verifier was trained on folds one to four). The bars
are chosen by ADR 0211's rule on those answers, at the packaged head's precision on the same
answers plus `--lift`, with the head's regression already fitted (on first sessions: it never
read a later one, so its probabilities there are out of sample). Recall is printed against
every session's expected proposals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
)
from factledger.adapters.judgement.value_fit import LaterReading, ValueFitHead
from factledger.application.memory.ports import Embedder
from factledger.bench.judgement.value_fit import (
    READ_FROM,
    Marked,
    choose,
    dev_answers,
    dev_halves,
    feature_matrix,
    features_of,
    fold_of,
    kept_at,
    outcome,
    packaged_reading,
    probabilities,
)


def later_unheld(marked: Sequence[Marked]) -> list[Marked]:
    """The answers of a case's later sessions to a field none of its earlier sessions answered
    over its bar (one the product would not hold yet), each marked as a later session's."""
    over: dict[tuple[str, str], list[int]] = defaultdict(list)
    for m in marked:
        if m.answer.over_bar >= 0:
            over[(m.case_id, m.answer.field)].append(m.session)
    return [
        replace(m, answer=replace(m.answer, later=True))
        for m in marked
        if m.session > 0 and not any(s < m.session for s in over[(m.case_id, m.answer.field)])
    ]


def later_bars(
    head: ValueFitHead,
    later: Sequence[Marked],
    labelled: int,
    embedder: Embedder,
    lift: float,
) -> tuple[tuple[float, float], dict[str, object]]:
    """The (keep, admit) pair ADR 0211's rule chooses on a later session's unheld answers,
    over the packaged head's precision on them plus `lift`, and what each reading keeps."""
    rows = asyncio.run(features_of(head, later))
    known = np.array([r is not None for r in rows])
    p = probabilities(feature_matrix(rows), head.weights.astype(np.float64), head.bias)
    over = packaged_reading(later, embedder).kept
    first = kept_at(later, p, known, head.keep_min, head.admit_min)
    keep, admit, base, chosen = choose(later, p, known, labelled, lift, over)
    report: dict[str, object] = {
        "answers": len(later),
        "answers of known fields": int(known.sum()),
        "the reader's bars": base,
        "the packaged head": outcome(later, over, labelled),
        "the first sessions' bars": outcome(later, first, labelled),
        "chosen": {"lift": lift, "keep_min": keep, "admit_min": admit, **chosen},
    }
    return (keep, admit), report


def as_packaged(head: ValueFitHead, packaged: ValueFitHead) -> LaterReading:
    """The packaged head's reading of a later session (its later reading where it has five
    weights of its own, else its own five), for a head whose five numbers are the packaged
    head's (its encoder, bank and reach); anything else stops the fit."""
    same_bank = all(
        np.array_equal(a, b)
        for a, b in zip(head.bank.arrays().values(), packaged.bank.arrays().values(), strict=True)
    )
    if head.embedder.model_id != packaged.embedder.model_id or not same_bank:
        raise SystemExit("the head's bank or encoder is not the packaged head's")
    if head.reach != packaged.reach:
        raise SystemExit("the head's reach is not the packaged head's")
    own = packaged.later_reading
    if own is not None and own.weights is not None:  # the packaged head reads later ones so
        return own
    if packaged.verifier is not None:
        raise SystemExit("the packaged head reads a later session with its verifier")
    return LaterReading(packaged.keep_min, packaged.admit_min, packaged.weights, packaged.bias)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.value_fit_later")
    parser.add_argument("--head", type=Path, required=True, help="a fitted value-fit file")
    parser.add_argument("--head-sha256", help="its pin (default: read unpinned, a lab file)")
    parser.add_argument(
        "--fit-dev",
        type=Path,
        action="append",
        default=[],
        help="a blind set's dev half whose later sessions' answers choose the bars (a held-out "
        "half is refused)",
    )
    parser.add_argument(
        "--as-packaged",
        action="store_true",
        help="read a later session as the packaged head does, its five weights and its bars "
        "(ADR 0243), in place of bars chosen on --fit-dev",
    )
    parser.add_argument(
        "--first-bars",
        type=float,
        nargs=2,
        metavar=("KEEP", "ADMIT"),
        help="the head's first sessions' bars in place of its own (ADR 0244; the admit bar "
        "never under the keep bar)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the file to write")
    parser.add_argument(
        "--lift",
        type=float,
        default=0.0,
        help="the precision the bars must add to the packaged head's on the same answers",
    )
    args = parser.parse_args(argv)
    if bool(args.fit_dev) == args.as_packaged:
        parser.error("--fit-dev or --as-packaged: one of them")
    if args.first_bars is not None and not 0 <= args.first_bars[0] <= args.first_bars[1] <= 1.01:
        parser.error("--first-bars: 0 <= KEEP <= ADMIT <= 1.01")
    dev_halves(args.fit_dev)  # a held-out half stops the fit before any model loads
    embedder = UseMultilingualEmbedder()
    head = ValueFitHead.load(args.head, args.head_sha256, embedder)
    if args.first_bars is not None:
        head = replace(head, keep_min=args.first_bars[0], admit_min=args.first_bars[1])
    if args.as_packaged:
        reading = as_packaged(head, ValueFitHead.packaged(embedder))
        sha256 = replace(head, later_reading=reading).save(args.out)
        sys.stdout.write(json.dumps({"later reading": "the packaged head's", "sha256": sha256}))
        sys.stdout.write("\n")
        return
    reader = QaFieldReader.load(PACKAGED_QA_READER, PACKAGED_QA_READER_SHA256, READ_FROM)
    every, labelled = dev_answers(reader, args.fit_dev, every_session=True)
    if head.verifier is not None:
        every = [m for m in every if fold_of(m.case_id) == 0]
    later = later_unheld(every)
    bars, report = later_bars(head, later, labelled, embedder, args.lift)
    sha256 = replace(head, later_reading=LaterReading(*bars)).save(args.out)
    result = {"dev halves": len(args.fit_dev), "later_bars": bars, **report, "sha256": sha256}
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
