"""`python -m factledger.bench.judgement.value_fit --out FILE|--frontier [--corpus DIR ...]
[--reader FILE --reader-sha256 HEX] [--span-slack S] [--encoder packaged|multilingual]
[--bank-dev DIR ...] [--fit-dev DIR ... [--dev-sessions first|every]] [--verifier GRAPH
[--lift-over packaged]]`: the value-fit head (`adapters.judgement.value_fit`, ADR 0211), fitted
on the writers' training conversations (and, with `--bank-dev`, a bank grown from blind sets'
dev halves, ADR 0237; with `--fit-dev`, a regression and bars fitted on their first sessions'
answers too, ADR 0238, or every session's, ADR 0240; with `--verifier`, a span verifier's
log-odds as a sixth number, fitted on the fold it never read, ADR 0239; no held-out half is
read). `--frontier` writes no file: it prints the bars the rule below chooses at each lift,
beside the reader's bars and the packaged head read on the same answers.

- The bank: every value labelled in a case that is not kept out, by field, embedded with the
  encoder chosen; with `--bank-dev`, also every value a dev half's writer expected as stated
  that a subject line of its session says word for word (the words a span can be).
- The answers: the kept-out cases (one in eight by a hash of the id, never trained on by the
  reader and never in the bank) read once through the product's adapter (at the span slack
  given, ADR 0227) from `reach` under each kind's bar, at ADR 0107's line level; each is
  right when it overlaps a labelled span of the same field and line.
- With `--fit-dev`, also each dev half's first sessions read the same way (a first session,
  where the subject holds no field yet: every answer is one the head judges), each answer
  right when it holds every keyword of an expected proposal of its session and field, by the
  scorer's reading.
- The regression: fitted on those answers' five features; its bars chosen, by the rule ADR
  0211 wrote first, on predictions made for each fifth of the cases by a fit on the other
  four: the pair (`keep_min`, `admit_min`, the second never under the first) of the grid
  keeping the most right answers at a line-level precision at least the bars' own plus
  `LIFT`; the file's regression is then fitted on every answer.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
)
from factledger.adapters.judgement.span_verifier import PinnedVerifier
from factledger.adapters.judgement.value_fit import (
    FEATURES,
    PACKAGED_VALUE_FIT,
    PACKAGED_VALUE_FIT_SHA256,
    VERIFIED_FEATURES,
    Bank,
    ValueAnswer,
    ValueFitHead,
    logistic,
)
from factledger.application.memory.ports import Embedder
from factledger.bench.evalsets.cases import load_cases
from factledger.bench.evalsets.score import holds_all
from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.qa_reader.floor import DATA, read_sessions
from factledger.bench.judgement.qa_reader.pairs import kept_out
from factledger.bench.judgement.qa_reader.scoring import Read
from factledger.bench.judgement.qa_reader.sessions import Session, blind_sessions, kept_out_sessions

REACH = 3.0  # how far under its bar an answer is read
READ_FROM = PACKAGED_QA_READER_FLOOR - REACH  # every field's answers, the lists' included
LIFT = 0.01  # the precision the bars must add to the reader's bars' own
FOLDS = 5
L2 = 1.0
KEEP_GRID = tuple(round(0.05 * n, 2) for n in range(0, 15))  # 0.0 ... 0.7
ADMIT_GRID = (*tuple(round(0.5 + 0.05 * n, 2) for n in range(0, 10)), 1.01)  # 1.01: none


@dataclass(frozen=True, slots=True)
class Marked:
    case_id: str
    answer: ValueAnswer
    right: bool
    gold: tuple[int, ...]  # the labelled spans it overlaps (their indexes)
    session: int = 0  # its session's index in its case


def said_around(lines: Sequence[tuple[str, str]], index: int) -> tuple[str, str]:
    """Line `index`'s text and the line before it when the subject did not say it."""
    before = lines[index - 1] if index > 0 else None
    agent = before[1] if before is not None and before[0] != "subject" else ""
    return lines[index][1], agent


def bank_values(corpora: Sequence[Path]) -> dict[str, list[str]]:
    """Each field's distinct labelled values in the cases that are not kept out."""
    values: dict[str, set[str]] = defaultdict(set)
    for case in load_training_cases(corpora).cases:
        if kept_out(case.id):
            continue
        for s in case.sessions:
            for p in s.proposals:
                if text := p.span.text.strip():
                    values[str(p.span.field)].add(text)
    return {name: sorted(v) for name, v in sorted(values.items())}


def dev_halves(directories: Sequence[Path]) -> Sequence[Path]:
    """`directories`, each a dev half: a held-out half stops the fit (it is never read)."""
    for directory in directories:
        if "heldout" in directory.parts:
            raise SystemExit(f"{directory}: a held-out half is never read")
    return directories


def dev_values(directories: Sequence[Path]) -> dict[str, list[str]]:
    """Each field's distinct values the dev halves' writers expected as stated and a subject
    line of the same session says word for word (case aside); a held-out half is refused."""
    values: dict[str, set[str]] = defaultdict(set)
    for directory in dev_halves(directories):
        for case in load_cases(directory):
            for session in case.sessions:
                said = [t.casefold() for role, t in session.lines if role == "subject"]
                for p in session.proposals:
                    text = p.value.strip()
                    if p.origin == "stated" and text and any(text.casefold() in s for s in said):
                        values[p.field].add(text)
    return {name: sorted(v) for name, v in sorted(values.items())}


def merged(*banks: dict[str, list[str]]) -> dict[str, list[str]]:
    """The banks' values of each field together, each once."""
    out: dict[str, set[str]] = defaultdict(set)
    for bank in banks:
        for name, texts in bank.items():
            out[name].update(texts)
    return {name: sorted(v) for name, v in sorted(out.items())}


def marked_read(
    r: Read, session: Session, over: float, is_list: bool, hits: tuple[int, ...]
) -> Marked:
    """A reader's answer as the head reads it (its line and the agent's before it), marked by
    the labels it holds (`hits`)."""
    others = tuple(f for f in session.fields if f != r.field)
    line, agent = said_around(session.lines, r.line)
    span = r.value.strip() or r.value
    answer = ValueAnswer(r.field, span, over, is_list, others, line=line, agent=agent)
    return Marked(r.case_id, answer, bool(hits), hits, session.index)


def bar_of(is_list: bool) -> float:
    return PACKAGED_QA_READER_LIST_FLOOR if is_list else PACKAGED_QA_READER_FLOOR


def marked_answers(reader: QaFieldReader, corpora: Sequence[Path]) -> tuple[list[Marked], int]:
    """The kept-out answers from `REACH` under their bars, marked; and the labelled spans."""
    sessions, gold = kept_out_sessions(corpora)
    fields = {(s.case_id, s.index): s for s in sessions}
    by_pair = defaultdict(list)
    for n, g in enumerate(gold):
        by_pair[(g.case_id, g.session, g.line, g.field)].append((n, g))
    reads: list[Read] = read_sessions(reader, sessions)
    out = []
    for r in reads:
        session = fields[(r.case_id, r.session)]
        is_list = session.lists.get(r.field, False)
        over = r.margin - bar_of(is_list)
        if over < -REACH:
            continue
        hits = tuple(
            n
            for n, g in by_pair[(r.case_id, r.session, r.line, r.field)]
            if r.start < g.end and g.start < r.end
        )
        out.append(marked_read(r, session, over, is_list, hits))
    return out, len(gold)


def dev_answers(
    reader: QaFieldReader, directories: Sequence[Path], first: int = 0, every_session: bool = False
) -> tuple[list[Marked], int]:
    """The dev halves' first sessions' answers (`every_session`: every session's, ADR 0240)
    from `REACH` under their bars, each marked by the keywords of the expected proposals of
    its session and field (numbered from `first`), and how many proposals those sessions
    expect; a held-out half is refused."""
    sessions, gold = [], []
    for directory in dev_halves(directories):
        read, expected = blind_sessions(directory)
        sessions += [s for s in read if every_session or s.index == 0]
        gold += [g for g in expected if every_session or g.session == 0]
    by_field = defaultdict(list)
    for n, g in enumerate(gold, start=first):
        by_field[(g.case_id, g.session, g.field)].append((n, g.keywords))
    by_session = {(s.case_id, s.index): s for s in sessions}
    out = []
    for r in read_sessions(reader, sessions):
        session = by_session[(r.case_id, r.session)]
        is_list = session.lists.get(r.field, False)
        over = r.margin - bar_of(is_list)
        if over < -REACH:
            continue
        hits = tuple(
            n for n, k in by_field[(r.case_id, r.session, r.field)] if holds_all(r.value, k)
        )
        out.append(marked_read(r, session, over, is_list, hits))
    return out, len(gold)


def fold_of(case_id: str) -> int:
    return int(hashlib.sha256(f"fold:{case_id}".encode()).hexdigest(), 16) % FOLDS


def fifth_of_fold_zero(case_id: str) -> int:
    """A case's fifth of fold zero, by another hash of its id: the bars' folds where a span
    verifier read folds one to four."""
    return int(hashlib.sha256(f"fifth:{case_id}".encode()).hexdigest(), 16) % FOLDS


def fit_regression(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """An L2-penalised logistic regression by Newton's method on standardised columns,
    returned on the raw columns."""
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.c_[(x - mu) / sd, np.ones(len(x))]
    w = np.zeros(z.shape[1])
    ridge = np.r_[np.full(z.shape[1] - 1, L2), 0.0] / len(y)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ (p - y) / len(y) + ridge * w
        hess = (z.T * (p * (1 - p))) @ z / len(y) + np.diag(ridge + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    weights = w[:-1] / sd
    return weights, float(w[-1] - (mu / sd) @ w[:-1])


def probabilities(x: np.ndarray, weights: np.ndarray, bias: float) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-(x @ weights + bias)))
    return out


def outcome(marked: Sequence[Marked], kept: Sequence[bool], labelled: int) -> dict[str, float]:
    made = int(sum(bool(k) for k in kept))
    right = sum(1 for m, k in zip(marked, kept, strict=True) if k and m.right)
    found = {g for m, k in zip(marked, kept, strict=True) if k for g in m.gold}
    return {
        "made": made,
        "right": right,
        "precision": round(right / made, 4) if made else 0.0,
        "labelled found": len(found),
        "recall": round(len(found) / labelled, 4) if labelled else 0.0,
    }


def kept_at(
    marked: Sequence[Marked], p: np.ndarray, known: np.ndarray, keep: float, admit: float
) -> list[bool]:
    out = []
    for m, q, k in zip(marked, p, known, strict=True):
        over = m.answer.over_bar >= 0
        out.append(bool(over if not k else (q >= keep if over else q >= admit)))
    return out


def choose(
    marked: Sequence[Marked],
    p: np.ndarray,
    known: np.ndarray,
    labelled: int,
    lift: float = LIFT,
    over: Sequence[bool] | None = None,
) -> tuple[float, float, dict[str, float], dict[str, float]]:
    """ADR 0211's rule: the most right answers at the bars' precision plus `lift`; with `over`,
    at the precision of the answers it keeps plus `lift` (ADR 0239: the packaged head's)."""
    base = outcome(marked, [m.answer.over_bar >= 0 for m in marked], labelled)
    floor = outcome(marked, over, labelled)["precision"] if over is not None else base["precision"]
    best: tuple[int, int, float, float] | None = None
    for keep in KEEP_GRID:
        for admit in ADMIT_GRID:
            if admit < keep:  # an answer under its bar never needs less than one over it
                continue
            o = outcome(marked, kept_at(marked, p, known, keep, admit), labelled)
            if o["precision"] < floor + lift:
                continue
            key = (int(o["right"]), -int(o["made"]), keep, admit)
            if best is None or key[:2] > best[:2]:
                best = key
    if best is None:
        raise SystemExit("no pair of bars reaches the precision the rule asks")
    keep, admit = best[2], best[3]
    return keep, admit, base, outcome(marked, kept_at(marked, p, known, keep, admit), labelled)


async def features_of(head: ValueFitHead, marked: Sequence[Marked]) -> list[list[float] | None]:
    return await head.features([m.answer for m in marked])


def feature_matrix(rows: Sequence[list[float] | None]) -> np.ndarray:
    """The rows as a matrix, a field the bank holds no values of as zeros (never read)."""
    blank = [0.0] * max((len(r) for r in rows if r is not None), default=len(FEATURES))
    return np.array([r if r is not None else blank for r in rows], dtype=np.float64)


def add_dev_sessions_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dev-sessions",
        choices=("first", "every"),
        default="first",
        help="which sessions of the --fit-dev halves give answers: the first (ADR 0238, where "
        "the subject holds nothing yet) or every one (ADR 0240: updates and later statements "
        "too, each marked by its own session's expected proposals)",
    )


def fit_answers(
    reader: QaFieldReader,
    corpora: Sequence[Path],
    fit_dev: Sequence[Path],
    every_session: bool = False,
) -> tuple[list[Marked], int]:
    """The kept-out training answers, then the dev halves' first sessions' (`--fit-dev`; with
    `every_session`, all their sessions'), marked, and the labelled proposals they are
    counted against."""
    marked, labelled = marked_answers(reader, corpora)
    if fit_dev:
        more, expected = dev_answers(reader, fit_dev, first=labelled, every_session=every_session)
        marked, labelled = marked + more, labelled + expected
    return marked, labelled


@dataclass(frozen=True, slots=True)
class PackagedReading:
    """The packaged head's reading of some answers: which it can read (their field in its
    bank), their five numbers, its probability of each as it reads it (a first session's with
    its verifier's number, where it has one; a later session's unheld one by its later
    reading), and which it keeps, as the product keeps them."""

    head: ValueFitHead
    known: np.ndarray
    five: np.ndarray
    p: np.ndarray
    kept: list[bool]


def packaged_reading(marked: Sequence[Marked], embedder: Embedder) -> PackagedReading:
    head = ValueFitHead.load(PACKAGED_VALUE_FIT, PACKAGED_VALUE_FIT_SHA256, embedder)
    rows = asyncio.run(features_of(head, marked))
    known = np.array([r is not None for r in rows])
    five = feature_matrix([r[: len(FEATURES)] if r is not None else None for r in rows])
    p = np.array(
        [
            0.0 if row is None else _probability(head, m.answer, row)
            for m, row in zip(marked, rows, strict=True)
        ]
    )
    kept = [head.keeps(m.answer, row) for m, row in zip(marked, rows, strict=True)]
    return PackagedReading(head, known, five, p, kept)


def _probability(head: ValueFitHead, answer: ValueAnswer, row: Sequence[float]) -> float:
    if answer.held:
        return head.probability(row)
    weights, bias, _, _ = head.reading_of(answer)
    return logistic(row, weights, bias)


FRONTIER_LIFTS = (0.0, 0.005, 0.01, 0.02, 0.03)


def frontier(
    marked: Sequence[Marked],
    p: np.ndarray,
    known: np.ndarray,
    labelled: int,
    shipped: Sequence[bool],
) -> dict[str, object]:
    """What the bars chosen out of fold give at each lift of `FRONTIER_LIFTS` (None: no pair
    reaches it), beside the reader's bars and what the packaged head keeps (`shipped`) of the
    same answers."""
    chosen: dict[str, object] = {}
    for lift in FRONTIER_LIFTS:
        try:
            keep, admit, _, o = choose(marked, p, known, labelled, lift)
        except SystemExit:
            chosen[str(lift)] = None
            continue
        chosen[str(lift)] = {"keep_min": keep, "admit_min": admit, **o}
    return {
        "the reader's bars": outcome(marked, [m.answer.over_bar >= 0 for m in marked], labelled),
        "the packaged head": outcome(marked, shipped, labelled),
        "chosen out of fold, by lift": chosen,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.value_fit")
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--out", type=Path, help="the file to write (required but with --frontier)")
    parser.add_argument(
        "--lift",
        type=float,
        default=LIFT,
        help="the line-level precision the bars must add to the reader's own (ADR 0211)",
    )
    parser.add_argument(
        "--reader",
        type=Path,
        default=PACKAGED_QA_READER,
        help="the QA reader whose answers the head reads (default: the packaged file)",
    )
    parser.add_argument(
        "--reader-sha256", help="its pin (required with --reader; the packaged file's by default)"
    )
    parser.add_argument(
        "--span-slack",
        type=float,
        default=0.0,
        help="the reader's span slack (ADR 0227; default 0: the best pairs, which the shipped "
        "head was fitted on)",
    )
    parser.add_argument(
        "--encoder",
        choices=("packaged", "multilingual"),
        default="multilingual",
        help="what embeds the bank and the spans: the multilingual encoder, as the shipped file "
        "was fitted (the default, ADR 0235), or the packaged sentence embedder",
    )
    parser.add_argument(
        "--bank-dev",
        type=Path,
        action="append",
        default=[],
        help="a blind set's dev half whose stated values, said word for word, join the bank "
        "(ADR 0237; a held-out half is refused)",
    )
    parser.add_argument(
        "--fit-dev",
        type=Path,
        action="append",
        default=[],
        help="a blind set's dev half whose first sessions' answers the regression and the bars "
        "are also fitted on (ADR 0238; a held-out half is refused)",
    )
    add_dev_sessions_option(parser)
    parser.add_argument(
        "--verifier",
        type=Path,
        help="a span verifier's int8 graph (ADR 0239: `span_verifier --save`, trained on folds "
        "one to four of these answers, the same --fit-dev given): its log-odds are a sixth "
        "number, the file carries it, and the regression and bars are fitted on fold zero "
        "alone, the answers it never read (bars out of fold over fold zero's own fifths)",
    )
    parser.add_argument(
        "--lift-over",
        choices=("reader", "packaged"),
        default="reader",
        help="whose precision on the same answers the bars must add --lift to: the reader's "
        "bars' (ADR 0211) or the packaged head's (ADR 0239)",
    )
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="write no file: print the bars chosen at each lift and the packaged head's reading "
        "of the same answers (ADR 0238)",
    )
    args = parser.parse_args(argv)
    if args.reader != PACKAGED_QA_READER and args.reader_sha256 is None:
        parser.error("--reader-sha256: required with --reader")
    if args.out is None and not args.frontier:
        parser.error("--out: required to write a file (or --frontier to print, not write)")
    corpora = args.corpus or [DATA]
    embedder: OnnxEmbedder | UseMultilingualEmbedder = (
        UseMultilingualEmbedder()
        if args.encoder == "multilingual"
        else OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
    )
    values = merged(bank_values(corpora), dev_values(args.bank_dev))
    texts = [t for v in values.values() for t in v]
    vectors = np.asarray(embedder.embed_sync(texts), dtype=np.float32)
    at, by_field = 0, {}
    for name, v in values.items():
        by_field[name] = vectors[at : at + len(v)]
        at += len(v)
    bank = Bank.of(by_field)
    verifier = None
    if args.verifier is not None:
        verifier = PinnedVerifier(
            args.verifier, hashlib.sha256(args.verifier.read_bytes()).hexdigest()
        )
    width = len(FEATURES) + (verifier is not None)
    blank = ValueFitHead(
        embedder, bank, np.zeros(width, np.float32), 0.0, 0.5, 0.5, REACH, verifier=verifier
    )
    reader = QaFieldReader.load(
        args.reader,
        args.reader_sha256 or PACKAGED_QA_READER_SHA256,
        READ_FROM,
        span_slack=args.span_slack,
    )
    marked, labelled = fit_answers(
        reader, corpora, args.fit_dev, every_session=args.dev_sessions == "every"
    )
    if verifier is not None:
        marked = [m for m in marked if fold_of(m.case_id) == 0]
    rows = asyncio.run(features_of(blank, marked))
    known = np.array([r is not None for r in rows])
    x = feature_matrix(rows)
    y = np.array([m.right for m in marked], dtype=np.float64)
    fold = fold_of if verifier is None else fifth_of_fold_zero
    folds = np.array([fold(m.case_id) for m in marked])
    p = np.zeros(len(marked))
    for k in range(FOLDS):
        train = known & (folds != k)
        w, b = fit_regression(x[train], y[train])
        p[folds == k] = probabilities(x[folds == k], w, b)
    if args.frontier:
        report = frontier(marked, p, known, labelled, packaged_reading(marked, embedder).kept)
        sys.stdout.write(json.dumps({"answers": len(marked), **report}, indent=1) + "\n")
        return
    over = None
    if args.lift_over == "packaged":
        over = packaged_reading(marked, embedder).kept
    keep, admit, base, chosen = choose(marked, p, known, labelled, args.lift, over)
    weights, bias = fit_regression(x[known], y[known])
    head = ValueFitHead(
        embedder, bank, weights.astype(np.float32), bias, keep, admit, REACH, verifier=verifier
    )
    sha256 = head.save(args.out)
    result = {
        "bank": {"fields": len(values), "values": len(texts), "dev halves": len(args.bank_dev)},
        "answers": len(marked),
        "dev halves fitted on": len(args.fit_dev),
        "answers of known fields": int(known.sum()),
        "labelled spans": labelled,
        "the reader's bars": base,
        "the packaged head": None if over is None else outcome(marked, over, labelled),
        "chosen out of fold": {
            "lift": args.lift,
            "over": args.lift_over,
            "keep_min": keep,
            "admit_min": admit,
            **chosen,
        },
        "verifier": None if args.verifier is None else str(args.verifier),
        "weights": dict(
            zip(VERIFIED_FEATURES, [round(float(w), 4) for w in weights], strict=False)
        ),
        "bias": round(bias, 4),
        "sha256": sha256,
    }
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
