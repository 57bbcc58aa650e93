"""The QA reader's answers read against what values of their field look like (ADR 0211).

The fields the subject holds no statement of are read `reach` under their bar; each of their
answers is then kept by the value-fit head (`adapters.judgement.value_fit`): one over its bar
unless the head doubts it is the kind of words the field holds, one under its bar only where
the head is sure it is. A held field is where an update is said, and its bars (the held
floor, the pair head's) were chosen on their own: its answers pass as read, unless the head
has a held bar of its own (ADR 0231: a deployment's setting; none by default). Where the
subject holds any field, the session is a later one, which a head may read its own way (ADRs
0242, 0243).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from factledger.adapters.judgement.qa_reader.reader import QaFieldReader, agent_before
from factledger.adapters.judgement.value_fit import ValueAnswer, ValueFitHead
from factledger.application.judgement.types import FieldStatement
from factledger.domain.transcript import Message


def reaching(fields: Sequence[str], held: Collection[str]) -> list[str]:
    """The fields read under their bar for the head: those the subject holds nothing of."""
    return [f for f in fields if f not in held]


def said_around(transcript: Sequence[Message], index: int) -> tuple[str, str]:
    """Message `index`'s words and the message before it when the subject did not say it."""
    line = transcript[index].text if 0 <= index < len(transcript) else ""
    return line, agent_before(transcript, index)


async def fitted(
    reader: QaFieldReader,
    head: ValueFitHead,
    transcript: Sequence[Message],
    found: Sequence[FieldStatement],
    fields: Sequence[str],
    lists: Collection[str],
    held: Collection[str],
) -> list[FieldStatement]:
    """The answers `found` (the unheld fields' read `head.reach` under their bar) the head
    keeps, in order; a held field's all where the head has no held bar."""
    judged = [s for s in found if s.field not in held or head.held_min is not None]
    if not judged:
        return list(found)
    answers = [
        ValueAnswer(
            s.field,
            s.clause.strip() or s.clause,
            s.p - reader.floor_of(s.field, lists, held),
            s.field in lists,
            tuple(fields),
            s.field in held,
            *said_around(transcript, s.message_index),
            later=bool(held),
        )
        for s in judged
    ]
    kept = await head.kept(answers)
    dropped = {id(s) for s, k in zip(judged, kept, strict=True) if not k}
    return [s for s in found if id(s) not in dropped]
