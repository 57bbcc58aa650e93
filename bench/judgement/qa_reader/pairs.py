"""The reader's training pairs: every field of its domain asked of every subject line.

A labelled line gives a positive pair for each field it states (the gold spans are its
labelled words) and a negative for every other field of the domain: which field a value
belongs to is what the earlier encoder never learnt (ADR 0081), so each line is asked them
all. An unlabelled subject line is asked every field too, all negatives.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from factledger.bench.judgement.conversations import TrainingCase

KEPT_OUT_ONE_IN = 8  # one case in eight, by a hash of its id, never trained on
FLAGS = ("update", "correction", "hedged", "inferred")


@dataclass(frozen=True, slots=True)
class LineAsked:
    """One subject line, with what a reader sees around it."""

    case_id: str
    session: int
    line: int
    text: str
    agent_before: str  # the agent's line just before, or ""


@dataclass(frozen=True, slots=True)
class QaPair:
    """A field asked of a line; `spans` are the gold (start, end) character offsets."""

    asked: LineAsked
    field: str
    meaning: str
    is_list: bool
    spans: tuple[tuple[int, int], ...]
    flags: tuple[bool, ...]  # in FLAGS order; all False for a negative


def kept_out(case_id: str) -> bool:
    return zlib.crc32(case_id.encode("utf-8")) % KEPT_OUT_ONE_IN == 0


def subject_lines(
    case_id: str, session: int, lines: Sequence[tuple[str, str]]
) -> Iterator[LineAsked]:
    for index, (role, text) in enumerate(lines):
        if role != "subject" or not text.strip():
            continue
        before = lines[index - 1] if index > 0 else ("", "")
        agent = before[1] if before[0] == "agent" else ""
        yield LineAsked(case_id, session, index, text, agent)


def pairs_of_case(case: TrainingCase) -> list[QaPair]:
    """Every field of the case's domain asked of every subject line of every session."""
    pairs = []
    for n, session in enumerate(case.sessions):
        for asked in subject_lines(case.id, n, session.lines):
            for field, meaning in case.fields.items():
                stated = [
                    p
                    for p in session.proposals
                    if p.span.line == asked.line and p.span.field == field
                ]
                spans = tuple(
                    sorted({(p.span.start, p.span.start + len(p.span.text)) for p in stated})
                )
                flags = (
                    any(p.updates is not None for p in stated),
                    any(p.correction for p in stated),
                    any(p.hedged for p in stated),
                    any(p.origin == "inferred" for p in stated),
                )
                pairs.append(QaPair(asked, field, meaning, case.is_list(field), spans, flags))
    return pairs


def split_pairs(cases: Sequence[TrainingCase]) -> tuple[list[QaPair], list[QaPair]]:
    """(training pairs, kept-out pairs)."""
    train: list[QaPair] = []
    held: list[QaPair] = []
    for case in cases:
        (held if kept_out(case.id) else train).extend(pairs_of_case(case))
    return train, held
