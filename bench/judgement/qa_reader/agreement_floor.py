"""`python -m factledger.bench.judgement.qa_reader.agreement_floor`: the floor from which an
answer the QA reader gives below its own floor is kept where the heads' clause reading agrees
(ADR 0122), by ADR 0107's rule.

The kept-out training cases are read by the shipped reader (or a deployment's, `--reader`)
down to the grid's lowest floor and by the shipped heads' field head, clause by clause; the
answers under the reader's own floor that a clause agrees on
(`adapters.judgement.qa_reader.agreement.agree`) are scored at the line level at each floor of
the grid below the reader's, beside the same answers without the agreement; the floor is the
lowest at which the agreed answers' precision reaches the target.
No blind set is read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from factledger.adapters.judgement.qa_reader.agreement import agree
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader, subject_lines
from factledger.api.bootstrap.judgement import learned_judge
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import FieldStatement
from factledger.bench.judgement.qa_reader.floor import (
    DATA,
    GRID,
    TARGET_PRECISION,
    choose,
    line_level,
)
from factledger.bench.judgement.qa_reader.scoring import Read, score_spans
from factledger.bench.judgement.qa_reader.sessions import Session, kept_out_sessions
from factledger.domain.transcript import Message, Role


async def below_floor(
    reader: QaFieldReader, heads: SentenceJudge, session: Session
) -> tuple[list[Read], list[Read]]:
    """The session's line-level answers under the reader's floor: all, and those agreed on."""
    transcript = [
        Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
        for role, text in session.lines
    ]
    lists = frozenset(f for f, many in session.lists.items() if many)
    answers = reader.answers_sync(subject_lines(transcript), session.fields, lists, min(GRID))
    reads = [r for r in line_level(answers, session) if r.margin < reader.floor_of(r.field, lists)]
    if not reads:
        return [], []
    clauses = await heads.field_statements(transcript, session.fields, lists)
    agreed = [
        r
        for r in reads
        if any(agree(FieldStatement(r.line, r.value, r.field, r.margin), c) for c in clauses)
    ]
    return reads, agreed


async def agreement_figures(
    reader: QaFieldReader, corpora: Sequence[Path], target: float = TARGET_PRECISION
) -> dict[str, object]:
    """The agreed answers' kept-out figures at every floor under `reader`'s, and the floor."""
    heads = learned_judge()
    sessions, gold = kept_out_sessions(corpora)
    every: list[Read] = []
    agreed: list[Read] = []
    for session in sessions:
        a, b = await below_floor(reader, heads, session)
        every += a
        agreed += b
    grid = [f for f in GRID if f < reader.floor]
    figures = {f: score_spans([r for r in agreed if r.margin >= f], gold) for f in grid}
    alone = {f: score_spans([r for r in every if r.margin >= f], gold) for f in grid}
    return {
        "sessions": len(sessions),
        "reader_floor": reader.floor,
        "target_precision": target,
        "agreement_floor": choose(figures, target),
        "kept_out line level, agreed answers under the floor": {
            str(f): v for f, v in figures.items()
        },
        "kept_out line level, every answer under the floor": {str(f): v for f, v in alone.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.agreement_floor"
    )
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--target", type=float, default=TARGET_PRECISION)
    parser.add_argument("--reader", type=Path, help="a deployment's reader file (its card's)")
    parser.add_argument("--sha256", help="the reader file's pin")
    parser.add_argument("--floor", type=float, help="the reader file's floor")
    parser.add_argument("--list-floor", type=float, help="the reader file's list floor")
    args = parser.parse_args(argv)
    if args.reader is not None and (args.sha256 is None or args.floor is None):
        parser.error("--reader: with its --sha256 and --floor")
    reader = (
        QaFieldReader.packaged()
        if args.reader is None
        else QaFieldReader.load(args.reader, args.sha256, args.floor, args.list_floor)
    )
    result = asyncio.run(agreement_figures(reader, args.corpus or [DATA], args.target))
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
