"""`python -m factledger.bench.judgement.qa_reader.same_reader --reader FILE --sha256 HEX`:
whether an exported reader reads as the packaged one (or `--against FILE`) does, with no
torch (ADR 0153's check of a reader loaded from the packaged file and exported again).

Two readings, each over the kept-out cases of the training corpus: the floor tool's figures
of both files at the shipped floors (line level at 5.5 and at 4.5, list fields at 6.0), and
both files' margins on the same inputs: for every subject line of those sessions and each
field of its case, the best span's margin over "no value" (no floor), compared pair by pair.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.judgement.onnx_graph import one_thread_session
from factledger.adapters.judgement.qa_reader.decode import answers
from factledger.adapters.judgement.qa_reader.inputs import LineWindow, batch_arrays, line_windows
from factledger.adapters.judgement.qa_reader.reader import (
    BATCH,
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_HELD_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    QaReaderIntegrityError,
)
from factledger.adapters.pinned_files import read_pinned
from factledger.bench.judgement.qa_reader.floor import DATA, floor_figures
from factledger.bench.judgement.qa_reader.sessions import Session, kept_out_sessions

FIGURE_TOLERANCE = 0.003  # ADR 0153 (b)
MARGIN_TOLERANCE = 0.25  # ADR 0153 (c): half a step of the floors' grid
OTHER_SPAN_SHARE = 0.01  # ADR 0153 (c): of the pairs where either margin reaches the held floor
HELD_FLOOR = PACKAGED_QA_READER_HELD_FLOOR or PACKAGED_QA_READER_FLOOR


@dataclass(frozen=True, slots=True)
class Best:
    """One (line, field, window)'s best span (token offsets) and its margin."""

    start: int
    end: int
    margin: float


def _session(path: Path, sha256: str | None) -> ort.InferenceSession:
    return one_thread_session(read_pinned(path, sha256, QaReaderIntegrityError, "QA reader file"))


def _tokenizer() -> Tokenizer:
    raw = read_pinned(TOKENIZER, TOKENIZER_SHA256, QaReaderIntegrityError, "tokenizer")
    tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _windows(tokenizer: Tokenizer, sessions: Sequence[Session]) -> list[tuple[str, LineWindow]]:
    """Every subject line's windows (with the line), all its case's fields asked, as the floor
    tool reads them."""
    out: list[tuple[str, LineWindow]] = []
    for s in sessions:
        for n, (role, text) in enumerate(s.lines):
            if role != "subject" or not text.strip():
                continue
            before = s.lines[n - 1] if n > 0 else ("subject", "")
            agent = before[1] if before[0] != "subject" else ""
            out += [(text, w) for w in line_windows(tokenizer, s.fields, text, agent)]
    return out


def _best(
    session: ort.InferenceSession, windows: Sequence[tuple[str, LineWindow]]
) -> Iterator[tuple[Best, ...]]:
    """Each window's best span per field, window by window."""
    for begin in range(0, len(windows), BATCH):
        chunk = windows[begin : begin + BATCH]
        start, end = session.run(None, batch_arrays([w for _, w in chunk]))
        for row, (text, w) in enumerate(chunk):
            n = len(w.ids)
            found = [
                answers(
                    np.asarray(start[row, f, :n]),
                    np.asarray(end[row, f, :n]),
                    w.first_line_token,
                    w.offsets,
                    text,
                    margin=-np.inf,
                    many=False,
                )
                for f in range(len(w.markers))
            ]
            yield tuple(
                Best(a[0].start, a[0].end, a[0].margin) if a else Best(0, 0, float("-inf"))
                for a in found
            )


def margin_figures(
    reader: tuple[Path, str | None], against: tuple[Path, str | None], corpora: Sequence[Path]
) -> dict[str, float | int]:
    """Both files' best-span margins on the same kept-out inputs, compared pair by pair."""
    sessions, _ = kept_out_sessions(corpora)
    windows = _windows(_tokenizer(), sessions)
    windows.sort(key=lambda item: len(item[1].ids))
    ours = list(_best(_session(*reader), windows))
    theirs = list(_best(_session(*against), windows))
    return _compared(ours, theirs)


def batch_noise(
    reader: tuple[Path, str | None], corpora: Sequence[Path], seed: int = 28
) -> dict[str, float | int]:
    """One file's margins on the same lines read twice, in batches of other lines (the
    windows shuffled): the int8 graph quantises its activations per batch, so a line's
    margins move with what it is batched with; the floor under any two files' differences."""
    sessions, _ = kept_out_sessions(corpora)
    windows = _windows(_tokenizer(), sessions)
    windows.sort(key=lambda item: len(item[1].ids))
    order = list(range(len(windows)))
    random.Random(seed).shuffle(order)
    session = _session(*reader)
    sorted_best = list(_best(session, windows))
    shuffled = list(_best(session, [windows[i] for i in order]))
    again: list[tuple[Best, ...]] = [()] * len(windows)
    for at, i in enumerate(order):
        again[i] = shuffled[at]
    return _compared(sorted_best, again)


def _compared(
    by_window: Sequence[tuple[Best, ...]], against: Sequence[tuple[Best, ...]]
) -> dict[str, float | int]:
    ours = [b for window in by_window for b in window]
    theirs = [b for window in against for b in window]
    same = [
        abs(a.margin - b.margin)
        for a, b in zip(ours, theirs, strict=True)
        if (a.start, a.end) == (b.start, b.end) and np.isfinite(a.margin)
    ]
    confident = [
        (a.start, a.end) != (b.start, b.end)
        for a, b in zip(ours, theirs, strict=True)
        if max(a.margin, b.margin) >= HELD_FLOOR
    ]
    return {
        "pairs": len(ours),
        "same_best_span": len(same),
        "largest_margin_difference": round(max(same, default=0.0), 5),
        "mean_margin_difference": round(float(np.mean(same)) if same else 0.0, 5),
        "pairs_either_at_held_floor": len(confident),
        "other_best_span_there": sum(confident),
    }


def at_shipped_floors(figures: dict[str, object]) -> dict[str, dict[str, float]]:
    """The floor tool's precision and recall at the shipped floors."""
    line = cast("dict[str, dict[str, float]]", figures["kept_out line level"])
    lists = cast("dict[str, dict[str, float]]", figures["kept_out line level, list fields"])

    def pr(table: dict[str, dict[str, float]], floor: float) -> dict[str, float]:
        return {k: float(table[str(floor)][k]) for k in ("precision", "recall")}

    return {
        f"line {PACKAGED_QA_READER_FLOOR}": pr(line, PACKAGED_QA_READER_FLOOR),
        f"line {HELD_FLOOR}": pr(line, HELD_FLOOR),
        f"list {PACKAGED_QA_READER_LIST_FLOOR}": pr(lists, PACKAGED_QA_READER_LIST_FLOOR),
    }


def verdict(
    ours: dict[str, dict[str, float]],
    theirs: dict[str, dict[str, float]],
    margins: dict[str, float | int],
) -> dict[str, object]:
    """ADR 0153's clauses (b) and (c) on the two files' figures."""
    gaps = {
        f"{at} {k}": round(abs(ours[at][k] - theirs[at][k]), 4) for at in ours for k in ours[at]
    }
    figures_hold = all(g <= FIGURE_TOLERANCE for g in gaps.values())
    margins_hold = float(margins["largest_margin_difference"]) <= MARGIN_TOLERANCE and int(
        margins["other_best_span_there"]
    ) <= OTHER_SPAN_SHARE * int(margins["pairs_either_at_held_floor"])
    return {"differences": gaps, "b_figures_hold": figures_hold, "c_margins_hold": margins_hold}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.same_reader"
    )
    parser.add_argument("--reader", type=Path, required=True)
    parser.add_argument("--sha256", required=True)
    parser.add_argument("--against", type=Path, default=PACKAGED_QA_READER)
    parser.add_argument("--against-sha256", default=None, help="default: the packaged file's")
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument(
        "--batch-noise",
        action="store_true",
        help="only --reader's margins read twice, in other batches (its own noise)",
    )
    args = parser.parse_args(argv)
    against_pin = args.against_sha256 or (
        PACKAGED_QA_READER_SHA256 if args.against == PACKAGED_QA_READER else None
    )
    corpora = args.corpus or [DATA]
    if args.batch_noise:
        noise = batch_noise((args.reader, args.sha256), corpora)
        sys.stdout.write(json.dumps({"reader": args.reader.name, "batch_noise": noise}) + "\n")
        return
    began = time.strftime("%H:%M:%S", time.gmtime())
    ours = at_shipped_floors(floor_figures(args.reader, args.sha256, corpora))
    theirs = at_shipped_floors(floor_figures(args.against, against_pin, corpora))
    margins = margin_figures((args.reader, args.sha256), (args.against, against_pin), corpora)
    report = {
        "reader": args.reader.name,
        "against": args.against.name,
        "utc": f"{began}-{time.strftime('%H:%M:%S', time.gmtime())}",
        "reader_figures": ours,
        "against_figures": theirs,
        "margins": margins,
        **verdict(ours, theirs, margins),
    }
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
