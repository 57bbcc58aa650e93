"""`python -m factledger.bench.judgement.qa_reader.span_slack [--reader FILE --sha256 HEX
--floor F]`: the QA reader's span slack (ADR 0227), chosen on the kept-out training cases.

The kept-out cases (one in eight by a hash of the id, never trained on) are read at the file's
floors once per slack of the grid, each single-valued field's best answer per line (ADR 0107's
line level). Each answer that overlaps a labelled span of its field and line is scored by the
words it shares with that span (F1 over word positions: a value cut short and one padded with
the words around it both lose). The slack is the grid's with the highest mean F1, the smaller
on a tie. No blind set is read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_HELD_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
)
from factledger.bench.judgement.qa_reader.floor import DATA, read_sessions
from factledger.bench.judgement.qa_reader.scoring import GoldSpan, Read, overlaps
from factledger.bench.judgement.qa_reader.sessions import Session, kept_out_sessions

GRID = tuple(n / 4 for n in range(7))  # 0, 0.25, ..., 1.5
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SpanFigures:
    answers: int  # single-valued answers (line level)
    on_a_label: int  # of them, overlapping a labelled span of their field and line
    mean_f1: float  # their mean word F1 against that span
    exact: int  # of them, exactly the labelled span
    extra_words: int  # words they hold beyond the labelled spans'


def word_starts(text: str, start: int, end: int) -> frozenset[int]:
    """Where each word of `text[start:end]` starts, in `text`."""
    return frozenset(start + m.start() for m in _WORD.finditer(text[start:end]))


def word_f1(text: str, answer: tuple[int, int], label: tuple[int, int]) -> float:
    """F1 of the answer's words against the label's (0 when they share none)."""
    said, meant = word_starts(text, *answer), word_starts(text, *label)
    shared = len(said & meant)
    if shared == 0:
        return 0.0
    precision, recall = shared / len(said), shared / len(meant)
    return 2 * precision * recall / (precision + recall)


def span_figures(
    reads: Sequence[Read], gold: Sequence[GoldSpan], lines: dict[tuple[str, int, int], str]
) -> SpanFigures:
    """The figures of single-valued `reads` against `gold`; `lines` gives each read's text."""
    labels: dict[tuple[str, int, int, str], list[GoldSpan]] = {}
    for g in gold:
        labels.setdefault((g.case_id, g.session, g.line, g.field), []).append(g)
    scores: list[float] = []
    exact = extra = 0
    for r in reads:
        key = (r.case_id, r.session, r.line, r.field)
        over = [g for g in labels.get(key, []) if overlaps(r, g)]
        if not over:
            continue
        text, label = lines[(r.case_id, r.session, r.line)], over[0]
        scores.append(word_f1(text, (r.start, r.end), (label.start, label.end)))
        exact += (r.start, r.end) == (label.start, label.end)
        extra += len(word_starts(text, r.start, r.end) - word_starts(text, label.start, label.end))
    return SpanFigures(
        answers=len(reads),
        on_a_label=len(scores),
        mean_f1=round(sum(scores) / len(scores), 4) if scores else 0.0,
        exact=exact,
        extra_words=extra,
    )


def choose(figures: dict[float, SpanFigures]) -> float:
    """The slack of the highest mean F1, the smaller on a tie."""
    return max(sorted(figures), key=lambda slack: (figures[slack].mean_f1, -slack))


def slack_figures(reader: QaFieldReader, corpora: Sequence[Path]) -> dict[str, object]:
    sessions, gold = kept_out_sessions(corpora)
    single = _single_valued(sessions)
    lines = {(s.case_id, s.index, n): text for s in sessions for n, (_, text) in enumerate(s.lines)}
    figures: dict[float, SpanFigures] = {}
    for slack in GRID:
        reads = read_sessions(replace(reader, span_slack=slack), sessions)
        figures[slack] = span_figures(
            [r for r in reads if (r.case_id, r.field) in single], gold, lines
        )
    return {
        "sessions": len(sessions),
        "span_slack": choose(figures),
        "kept_out single-valued answers": {str(s): asdict(f) for s, f in figures.items()},
    }


def _single_valued(sessions: Sequence[Session]) -> set[tuple[str, str]]:
    return {(s.case_id, name) for s in sessions for name, many in s.lists.items() if not many}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.span_slack"
    )
    parser.add_argument("--reader", type=Path, default=PACKAGED_QA_READER)
    parser.add_argument("--sha256", default=None, help="the file's pin (default: the packaged)")
    parser.add_argument(
        "--floor",
        type=float,
        default=None,
        help="the file's floor (default: the packaged file's floors)",
    )
    parser.add_argument("--corpus", type=Path, action="append")
    args = parser.parse_args(argv)
    if args.reader == PACKAGED_QA_READER:
        reader = QaFieldReader.load(
            args.reader,
            args.sha256 or PACKAGED_QA_READER_SHA256,
            PACKAGED_QA_READER_FLOOR if args.floor is None else args.floor,
            PACKAGED_QA_READER_LIST_FLOOR,
            PACKAGED_QA_READER_HELD_FLOOR,
        )
    elif args.floor is None:
        parser.error("--floor: required with a reader file of one's own")
    else:
        reader = QaFieldReader.load(args.reader, args.sha256, args.floor)
    result = slack_figures(reader, args.corpus or [DATA])
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
