"""A line's sentences read on their own as well as the whole line.

The reader was trained on lines of a sentence or two; a long line (an email, a reply that
answers three questions at once) spreads the "is there a value" evidence over many words, and
the value's span scores below the floor that the whole line's best span would clear. Each
sentence of a line of several is therefore read again by itself, after the same agent's line;
its answers are placed back in the line's characters and merged with the line's: a span found
twice counts once at its better margin, and of two overlapping spans of a field the better
one stays (ADR 0122).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from factledger.adapters.judgement.qa_reader.reader import FieldAnswer, LineRead, QaFieldReader

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_SENTENCE_CHARS = 3


@dataclass(frozen=True, slots=True)
class SentenceRead:
    """A sentence of a line to read on its own: the read, and where it starts in the line."""

    read: LineRead
    at: int


def sentence_reads(lines: Iterable[LineRead]) -> list[SentenceRead]:
    """Every sentence of each line that has two or more, after that line's agent's line."""
    out: list[SentenceRead] = []
    for line in lines:
        spans = _sentence_spans(line.text)
        if len(spans) < 2:
            continue
        out += [SentenceRead(LineRead(line.index, line.text[a:b], line.agent), a) for a, b in spans]
    return out


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for cut in [*_SENTENCE_END.finditer(text), None]:
        end = len(text) if cut is None else cut.start()
        if len(text[start:end].strip()) >= MIN_SENTENCE_CHARS:
            spans.append((start, end))
        if cut is not None:
            start = cut.end()
    return spans


def in_line(answer: FieldAnswer, read: SentenceRead) -> FieldAnswer:
    """A sentence's answer in its line's characters and under its line's index."""
    return replace(
        answer, index=read.read.index, start=answer.start + read.at, end=answer.end + read.at
    )


def merged(answers: Sequence[FieldAnswer]) -> list[FieldAnswer]:
    """Per line and field, the answers best first, none overlapping a better one."""
    kept: list[FieldAnswer] = []
    for a in sorted(answers, key=lambda a: a.margin, reverse=True):
        if not any(
            k.index == a.index and k.field == a.field and a.start < k.end and k.start < a.end
            for k in kept
        ):
            kept.append(a)
    return kept


def answers_by_sentence(
    reader: QaFieldReader,
    lines: Sequence[LineRead],
    fields: Sequence[str],
    lists: Collection[str] = (),
) -> list[FieldAnswer]:
    """The reader's answers for the whole lines and for their sentences read alone, merged."""
    whole = reader.answers_sync(lines, fields, lists)
    reads = sentence_reads(lines)
    if not reads:
        return whole
    # Each sentence is read under its own number, so that its answers find their way back.
    numbered = [replace(r.read, index=n) for n, r in enumerate(reads)]
    alone = reader.answers_sync(numbered, fields, lists)
    return merged([*whole, *(in_line(a, reads[a.index]) for a in alone)])
