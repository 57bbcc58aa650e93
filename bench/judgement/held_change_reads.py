"""The pair head's examples from the QA reader's own answers (ADR 0145).

ADR 0137's examples pair a held field with every sentence of a later session; what the head
judges in the product is narrower: the reader's own answer of a held field, with the reader's
margin for it. Its wrong changes (a held name read as changed by a greeting, the agent's words
repeated, the held value said again) are the reader's answers in sessions where the labels
expect no value of the field, and no sentence-level pair is shaped like them. Here the shipped
reader reads every later session of the training cases outside the kept-out hash, as the
product asks it (all the case's fields, from the grid's lowest bar), and each answer of a held
single-valued field is an example: a change when its span overlaps a labelled proposal of the
field in the same line that changes the held value (`updates:` set, or another value), else not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from factledger.adapters.extraction.learned.extractor import sentences_of
from factledger.adapters.judgement.held_change import HeldPair
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.bench.judgement.conversations import TrainingCase
from factledger.bench.judgement.qa_reader.floor import read_sessions
from factledger.bench.judgement.qa_reader.pairs import kept_out
from factledger.bench.judgement.qa_reader.scoring import Read
from factledger.bench.judgement.qa_reader.sessions import Session

# The margin's bins: the grid's bars, and the shipped held floor the head acts under.
MARGIN_EDGES = (-6.0, -4.0, -2.0, 0.0, 2.0, 4.5)


@dataclass(frozen=True, slots=True)
class HeldSession:
    """A later session of a case, with the single-valued fields held from earlier ones."""

    session: Session
    held: dict[str, tuple[str, str]]  # field -> (the words held, the value)
    changes: frozenset[tuple[int, str, int, int]]  # labelled changes: (line, field, start, end)


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def held_sessions(cases: Sequence[TrainingCase]) -> Iterator[HeldSession]:
    """Each session of `cases` in which a single-valued field is held from an earlier one."""
    for case in cases:
        lists = {f: case.is_list(f) for f in case.fields}
        held: dict[str, tuple[str, str]] = {}
        for n, s in enumerate(case.sessions):
            if held:
                changes = frozenset(
                    (p.span.line, str(p.span.field), p.span.start, p.span.start + len(p.span.text))
                    for p in s.proposals
                    if str(p.span.field) in held
                    and (p.updates is not None or not _same(p.value, held[str(p.span.field)][1]))
                )
                session = Session(case.id, n, s.lines, tuple(case.fields), lists)
                yield HeldSession(session, dict(held), changes)
            for p in s.proposals:
                if not lists.get(str(p.span.field), False):
                    held[str(p.span.field)] = (p.span.text, p.value)


def sentence_of(read: Read, lines: Sequence[tuple[str, str]]) -> str:
    """The sentence of its line the answer stands in (the line, if none holds it whole)."""
    line = lines[read.line][1]
    return next((s for s in sentences_of(line) if read.value in s), line)


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """A held field read against a later sentence (ADR 0137's pairs, or the reader's answers
    with their spans and margins), with whether it changes the held value, and its case (for
    the kept-out hash)."""

    pair: HeldPair
    changed: bool
    case_id: str


def read_examples(reads: Sequence[Read], sessions: Sequence[HeldSession]) -> list[LabelledPair]:
    """Each answer of a held single-valued field, labelled a change or not."""
    by_key = {(h.session.case_id, h.session.index): h for h in sessions}
    out = []
    for r in reads:
        h = by_key.get((r.case_id, r.session))
        if h is None or r.field not in h.held:
            continue
        changed = any(
            line == r.line and name == r.field and start < r.end and r.start < end
            for line, name, start, end in h.changes
        )
        pair = HeldPair(
            r.field, h.held[r.field][0], sentence_of(r, h.session.lines), r.value, r.margin
        )
        out.append(LabelledPair(pair, changed, r.case_id))
    return out


def reads_of(reader: QaFieldReader, sessions: Sequence[Session], cache: Path | None) -> list[Read]:
    """`read_sessions`, kept in `cache` (a lab file) when given: the reading is most of a fit."""
    if cache is not None and cache.exists():
        return [Read(**r) for r in json.loads(cache.read_text())]
    reads = read_sessions(reader, sessions)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps([asdict(r) for r in reads]))
    return reads


def training_examples(
    cases: Sequence[TrainingCase], reader: QaFieldReader, cache: Path | None = None
) -> list[LabelledPair]:
    """The examples of the cases outside the kept-out hash, read by `reader`."""
    sessions = list(held_sessions([c for c in cases if not kept_out(c.id)]))
    reads = reads_of(reader, [h.session for h in sessions], cache)
    return read_examples(reads, sessions)
