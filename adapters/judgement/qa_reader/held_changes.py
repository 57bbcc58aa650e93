"""A held field's answers under its floor, kept where the pair head reads a change (ADR 0137).

The held floor (ADR 0128) is one number for every held field: an update the reader scores
under it is lost, and most lost updates score far under any bar that one number could take
without proposing noise. Here a held single-valued field is read from the pair head's own
bar, and an answer under the held floor is kept only when the head reads its sentence as
stating another value than the words the subject holds (a head trained on the reader's own
answers also reads the answer's words and the reader's margin, ADR 0145). A field whose held
words are not known keeps the held floor.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from factledger.adapters.judgement.held_change import HeldChangeHead, HeldPair
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.application.judgement.types import FieldStatement
from factledger.application.proposals.candidates import whole_sentence
from factledger.domain.transcript import Message


def sentence_of(statement: FieldStatement, transcript: Sequence[Message]) -> str:
    """The sentence of its line an answer stands in (the line, if the cut misses it)."""
    line = transcript[statement.message_index].text
    return whole_sentence(line, containing=(statement.clause,))


async def changed_statements(
    reader: QaFieldReader,
    head: HeldChangeHead,
    transcript: Sequence[Message],
    fields: Sequence[str],
    lists: Collection[str],
    held: Mapping[str, str],
    reach: float = 0.0,
    reaching: Collection[str] = (),
) -> list[FieldStatement]:
    """The reader's answers, a held field's read from the head's bar; those under the held
    floor kept only where the head reads a change of the held words (the fields in
    `reaching`, none of them held, read `reach` under their bar)."""
    found = await reader.field_statements(
        transcript, fields, lists, held=held, held_floor=head.bar, reach=reach, reaching=reaching
    )
    under = [
        s
        for s in found
        if s.field in held and s.field not in lists and s.p < reader.floor_of(s.field, lists, held)
    ]
    if not under:
        return found
    asked = [(s, held[s.field]) for s in under if held[s.field]]
    p = await head.changed(
        [HeldPair(s.field, words, sentence_of(s, transcript), s.clause, s.p) for s, words in asked]
    )
    kept = {id(s) for (s, _), q in zip(asked, p, strict=True) if q >= head.changed_min}
    dropped = {id(s) for s in under} - kept
    return [s for s in found if id(s) not in dropped]
