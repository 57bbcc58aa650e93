"""The QA reader's answers screened by an `AnswerStanceReader` (ADR 0121): each answer is
read in the sentence it stands on, beside the reader's other answers of the session, and
kept only when that sentence states the value for its field; a kept answer read as stated
tentatively is marked hedged, so that it is proposed with its condition."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from factledger.application.judgement.stance import AnswerStanceReader, ReaderAnswer
from factledger.application.judgement.types import FieldStatement
from factledger.application.proposals.candidates import whole_sentence
from factledger.domain.transcript import Message


def _words(line: str, value: str) -> tuple[int, int]:
    at = line.find(value)
    return (at, at + len(value)) if at >= 0 else (0, len(line))


def reader_answers(
    transcript: Sequence[Message], found: Sequence[FieldStatement], lists: Collection[str]
) -> list[ReaderAnswer]:
    """Each statement as the stance reader reads it, in order (the lab fits on these)."""
    where = [_words(transcript[s.message_index].text, s.clause) for s in found]
    best: dict[str, float] = {}
    for s in found:
        best[s.field] = max(best.get(s.field, 0.0), s.p)
    out = []
    for n, s in enumerate(found):
        lo, hi = where[n]
        rival = max(
            (
                o.p
                for m, o in enumerate(found)
                if o.message_index == s.message_index
                and o.field != s.field
                and where[m][0] < hi
                and lo < where[m][1]
            ),
            default=0.0,
        )
        line = transcript[s.message_index].text
        sentence = whole_sentence(line, containing=(s.clause,))
        out.append(
            ReaderAnswer(sentence, s.clause, s.field, s.p, s.field in lists, rival, best[s.field])
        )
    return out


async def screened(
    reader: AnswerStanceReader,
    transcript: Sequence[Message],
    found: Sequence[FieldStatement],
    lists: Collection[str],
    wanted: Collection[str],
) -> tuple[list[FieldStatement], set[FieldStatement]]:
    """The statements of the `wanted` fields the stance reader keeps, in order, and those of
    them it reads as stated tentatively; every field's statement is read beside the others."""
    read = [
        (s, a)
        for s, a in zip(found, reader_answers(transcript, found, lists), strict=True)
        if s.field in wanted
    ]
    if not read:
        return [], set()
    readings = await reader.read([a for _, a in read])
    kept = [(s, r) for (s, _), r in zip(read, readings, strict=True) if r.kept]
    return [s for s, _ in kept], {s for s, r in kept if r.hedged}
