"""`python -m factledger.bench.judgement.qa_reader.floor [--reader FILE --sha256 HEX]`: the
exported reader's floor, by ADR 0107's rule, read through the product's adapter (no torch).

The kept-out training cases are read once with every answer down to the grid's lowest floor;
each floor of the grid is then scored at the line level (each single-valued field's best
answer per line, a list field's every answer; right when it overlaps a labelled span of the
same field and line), and the floor is the lowest at which the precision reaches the target.
No blind set is read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_SHA256,
    FieldAnswer,
    QaFieldReader,
    subject_lines,
)
from factledger.bench.judgement.conversations import CONVERSATIONS
from factledger.bench.judgement.qa_reader.scoring import Read, score_spans
from factledger.bench.judgement.qa_reader.sessions import Session, kept_out_sessions
from factledger.domain.transcript import Message, Role

GRID = tuple(n / 2 for n in range(21))  # 0, 0.5, ..., 10
TARGET_PRECISION = 0.85
DATA = Path(__file__).resolve().parent.parent / "data" / CONVERSATIONS


def line_level(answers: Sequence[FieldAnswer], session: Session) -> list[Read]:
    """Each single-valued field's best answer per line, a list field's every answer."""
    best: dict[tuple[int, str], FieldAnswer] = {}
    out = []
    for a in answers:
        if session.lists.get(a.field, False):
            out.append(a)
        elif (a.index, a.field) not in best or a.margin > best[(a.index, a.field)].margin:
            best[(a.index, a.field)] = a
    return [
        Read(session.case_id, session.index, a.index, a.field, a.start, a.end, a.value, a.margin)
        for a in [*out, *best.values()]
    ]


def read_sessions(reader: QaFieldReader, sessions: Sequence[Session]) -> list[Read]:
    reads = []
    for s in sessions:
        transcript = [
            Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
            for role, text in s.lines
        ]
        lists = frozenset(name for name, many in s.lists.items() if many)
        reads += line_level(reader.answers_sync(subject_lines(transcript), s.fields, lists), s)
    return reads


def choose(figures: dict[float, dict[str, float | int]], target: float) -> float | None:
    """The lowest floor whose precision reaches `target` (None: none does)."""
    return next((f for f in sorted(figures) if float(figures[f]["precision"]) >= target), None)


def floor_figures(
    path: Path,
    sha256: str | None,
    corpora: Sequence[Path],
    target: float = TARGET_PRECISION,
    *,
    spread_lists: bool = False,
    list_target: float | None = None,
) -> dict[str, object]:
    """The file's kept-out figures at every floor of the grid, and its floor by the rule;
    then the same for list fields alone (their answers against their labelled spans), and
    the list floor by the same rule (ADR 0113; None: the list fields keep the floor), or at
    `list_target` when given (a file whose list scores mean something else matched to the
    list precision of the file it replaces: ADR 0129, 0139)."""
    reader = QaFieldReader.load(path, sha256, min(GRID), spread_lists=spread_lists)
    sessions, gold = kept_out_sessions(corpora)
    started = time.perf_counter()
    reads = read_sessions(reader, sessions)
    seconds = round(time.perf_counter() - started, 1)
    figures = {f: score_spans([r for r in reads if r.margin >= f], gold) for f in GRID}
    lists = {(s.case_id, name) for s in sessions for name, many in s.lists.items() if many}
    list_reads = [r for r in reads if (r.case_id, r.field) in lists]
    list_gold = [g for g in gold if (g.case_id, g.field) in lists]
    list_figures = {
        f: score_spans([r for r in list_reads if r.margin >= f], list_gold) for f in GRID
    }
    return {
        "reader": path.name,
        "sessions": len(sessions),
        "read_seconds": seconds,
        "target_precision": target,
        "floor": choose(figures, target),
        "list_target_precision": target if list_target is None else list_target,
        "list_floor": choose(list_figures, target if list_target is None else list_target),
        "kept_out line level": {str(f): v for f, v in figures.items()},
        "kept_out line level, list fields": {str(f): v for f, v in list_figures.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.qa_reader.floor")
    parser.add_argument("--reader", type=Path, default=PACKAGED_QA_READER)
    parser.add_argument("--sha256", default=None, help="the file's pin (default: the packaged)")
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--target", type=float, default=TARGET_PRECISION)
    parser.add_argument(
        "--spread-lists",
        action="store_true",
        help="measure a list field's spans by all its items' mass (ADR 0129)",
    )
    parser.add_argument(
        "--list-target",
        type=float,
        default=None,
        help="the list floor's precision target (default: --target)",
    )
    args = parser.parse_args(argv)
    sha256 = args.sha256 or (
        PACKAGED_QA_READER_SHA256 if args.reader == PACKAGED_QA_READER else None
    )
    result = floor_figures(
        args.reader,
        sha256,
        args.corpus or [DATA],
        args.target,
        spread_lists=args.spread_lists,
        list_target=args.list_target,
    )
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
