"""`python -m factledger.bench.judgement.qa_reader.sentence_floor`: the floor of the answers
that only a line's sentence read alone gives (ADR 0122), by ADR 0107's rule.

The kept-out training cases are read as the product reads them with `qa_reader_by_sentence`:
the whole lines at the reader's own floors, and each sentence of a line of several alone at
no floor. A sentence's answer that overlaps none of the whole line's kept answers of its field
is the sentence's own; the floor is the lowest of the grid at which those answers' line-level
precision (right when it overlaps a labelled span of its field and line) reaches the target.
No blind set is read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from factledger.adapters.judgement.qa_reader.reader import (
    FieldAnswer,
    QaFieldReader,
    subject_lines,
)
from factledger.adapters.judgement.qa_reader.sentences import in_line, sentence_reads
from factledger.bench.judgement.qa_reader.floor import DATA, GRID, TARGET_PRECISION, choose
from factledger.bench.judgement.qa_reader.scoring import Read, score_spans
from factledger.bench.judgement.qa_reader.sessions import Session, kept_out_sessions
from factledger.domain.transcript import Message, Role


def _overlaps(a: FieldAnswer, b: FieldAnswer) -> bool:
    same = a.index == b.index and a.field == b.field
    return same and a.start < b.end and b.start < a.end


def sentences_own(reader: QaFieldReader, floors: QaFieldReader, session: Session) -> list[Read]:
    """The answers of the session's sentences read alone (by `reader`, at no floor) that its
    whole lines did not give at the floors of `floors`."""
    transcript = [
        Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
        for role, text in session.lines
    ]
    lines = subject_lines(transcript)
    lists = [f for f, many in session.lists.items() if many]
    whole = [
        a
        for a in reader.answers_sync(lines, session.fields, lists)
        if a.margin >= floors.floor_of(a.field, lists)
    ]
    reads = sentence_reads(lines)
    numbered = [replace(r.read, index=n) for n, r in enumerate(reads)]
    alone = [
        in_line(a, reads[a.index]) for a in reader.answers_sync(numbered, session.fields, lists)
    ]
    own = [a for a in alone if not any(_overlaps(a, w) for w in whole)]
    return [
        Read(session.case_id, session.index, a.index, a.field, a.start, a.end, a.value, a.margin)
        for a in own
    ]


def sentence_floor_figures(
    floors: QaFieldReader, corpora: Sequence[Path], target: float = TARGET_PRECISION
) -> dict[str, object]:
    """The sentences' own answers' figures at every floor of the grid, and the floor."""
    sessions, gold = kept_out_sessions(corpora)
    unfloored = QaFieldReader(b"", min(GRID), min(GRID), _loaded=floors._ready())
    reads = [r for s in sessions for r in sentences_own(unfloored, floors, s)]
    figures = {f: score_spans([r for r in reads if r.margin >= f], gold) for f in GRID}
    return {
        "sessions": len(sessions),
        "target_precision": target,
        "sentence_floor": choose(figures, target),
        "kept_out line level, sentences' own answers": {str(f): v for f, v in figures.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factledger.bench.judgement.qa_reader.sentence_floor"
    )
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--target", type=float, default=TARGET_PRECISION)
    args = parser.parse_args(argv)
    result = sentence_floor_figures(QaFieldReader.packaged(), args.corpus or [DATA], args.target)
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
