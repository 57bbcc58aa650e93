"""Answers the QA reader gives below its floor, kept where the heads' clause reader agrees.

The reader's floor (ADR 0107) was set where its own answers reach the training cases'
precision target; on conversations nobody here wrote, most true values it misses are read
below that floor, beside as many wrong ones. A second, independent reading separates them: the
heads' field head (ADR 0058) reads each clause of the subject's lines over the packaged
embedder. An answer under the reader's floor but at or above `agreement_floor` is kept when
that head reads a clause of the same line as stating the same field, and the clause and the
answer hold one another. Only those clauses can agree, so only they are read (ADR 0127): the
heads' reading of a clause depends on the clause and the question before it alone. The
agreement floor is fitted on the training cases' kept-out part by the reader's own rule
(`python -m factledger.bench.judgement.qa_reader.agreement_floor`, ADR 0122).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from factledger.adapters.judgement.fields import clauses_of
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import FieldStatement
from factledger.domain.transcript import Message, Role

# The shipped reader's and heads' agreement floor: the lowest at which the agreed answers under
# the reader's floor reach precision 0.85 on the training cases' kept-out part (ADR 0122).
PACKAGED_QA_READER_AGREEMENT_FLOOR = 1.0


def agree(answer: FieldStatement, clause: FieldStatement) -> bool:
    """The clause reading states the answer's field in its line, one holding the other."""
    return (
        clause.message_index == answer.message_index
        and clause.field == answer.field
        and (answer.clause in clause.clause or clause.clause in answer.clause)
    )


def kept(
    found: Sequence[FieldStatement],
    clauses: Sequence[FieldStatement],
    reader: QaFieldReader,
    lists: Collection[str],
) -> list[FieldStatement]:
    """The answers that clear the reader's floor, and those below it that a clause agrees on."""
    return [
        s
        for s in found
        if s.p >= reader.floor_of(s.field, lists) or any(agree(s, c) for c in clauses)
    ]


async def agreed_statements(
    reader: QaFieldReader,
    heads: SentenceJudge,
    transcript: Sequence[Message],
    fields: Sequence[str],
    lists: Collection[str],
    agreement_floor: float,
) -> list[FieldStatement]:
    """The reader's answers from `agreement_floor`, those below its own floor kept only where
    the heads' clause reading agrees. The heads read only the clauses that could agree with an
    answer that could be proposed, and not at all when there is none."""
    found = await reader.field_statements(transcript, fields, lists, floor=agreement_floor)
    lists = frozenset(lists)
    read = only_clauses(transcript, _undecided(found, reader, lists))
    if not any(m.text for m in read):
        return [s for s in found if s.p >= reader.floor_of(s.field, lists)]
    clauses = await heads.field_statements(read, fields, lists)
    return kept(found, clauses, reader, lists)


def _undecided(
    found: Sequence[FieldStatement], reader: QaFieldReader, lists: Collection[str]
) -> list[FieldStatement]:
    """The answers under the floor that could be proposed: a list field's, and a
    single-valued field's that no answer clears the floor of (its best answer is proposed)."""
    sure = {s.field for s in found if s.p >= reader.floor_of(s.field, lists)}
    return [
        s
        for s in found
        if s.p < reader.floor_of(s.field, lists) and (s.field in lists or s.field not in sure)
    ]


def only_clauses(transcript: Sequence[Message], answers: Sequence[FieldStatement]) -> list[Message]:
    """The transcript as the heads need to read it for `answers`: each answer's line cut to
    its clauses that hold the answer or are held by it, the agent's line before it kept
    whole, every other line emptied (every index kept, so the readings name the lines)."""
    holding: dict[int, list[str]] = {}
    for i, message in enumerate(transcript):
        words = [a.clause for a in answers if a.message_index == i]
        if not words:
            continue
        said = [c for c in clauses_of(message.text) if any(w in c or c in w for w in words)]
        if said:
            holding[i] = said
    read = only_lines(transcript, holding)
    # Joined where the heads' clause splitting cuts again, so it gives back these clauses.
    return [
        replace(m, text="; ".join(holding[i])) if i in holding else m for i, m in enumerate(read)
    ]


def only_lines(transcript: Sequence[Message], indexes: Collection[int]) -> list[Message]:
    """The transcript with only the lines at `indexes` and the agent's line before each
    said (the others emptied, every index kept): the field head reads each clause with the
    question before it alone, so the lines it reads are read as in the whole transcript."""
    asked = {i - 1 for i in indexes if i > 0 and transcript[i - 1].role is not Role.SUBJECT}
    keep = set(indexes) | asked
    return [m if i in keep else replace(m, text="") for i, m in enumerate(transcript)]
