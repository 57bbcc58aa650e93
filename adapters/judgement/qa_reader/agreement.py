"""Answers the QA reader gives below its floor, kept where the heads' clause reader agrees.

The reader's floor (ADR 0107) was set where its own answers reach the training cases'
precision target; on conversations nobody here wrote, most true values it misses are read
below that floor, beside as many wrong ones. A second, independent reading separates them: the
heads' field head (ADR 0058) reads each clause of the subject's lines over the packaged
embedder. An answer under the reader's floor but at or above `agreement_floor` is kept when
that head reads a clause of the same line as stating the same field, and the clause and the
answer hold one another. The agreement floor is fitted on the training cases' kept-out part
by the reader's own rule (`python -m factledger.bench.judgement.qa_reader.agreement_floor`,
ADR 0122).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

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
    the heads' clause reading agrees (the heads read only the lines of the answers that could
    be proposed, when there are any)."""
    found = await reader.field_statements(transcript, fields, lists, floor=agreement_floor)
    lists = frozenset(lists)
    undecided = _undecided(found, reader, lists)
    if not undecided:
        return found
    clauses = await heads.field_statements(only_lines(transcript, undecided), fields, lists)
    return kept(found, clauses, reader, lists)


def _undecided(
    found: Sequence[FieldStatement], reader: QaFieldReader, lists: Collection[str]
) -> set[int]:
    """The lines of the answers under the floor that could be proposed: a list field's, and a
    single-valued field's that no answer clears the floor of (its best answer is proposed)."""
    sure = {s.field for s in found if s.p >= reader.floor_of(s.field, lists)}
    return {
        s.message_index
        for s in found
        if s.p < reader.floor_of(s.field, lists) and (s.field in lists or s.field not in sure)
    }


def only_lines(transcript: Sequence[Message], indexes: Collection[int]) -> list[Message]:
    """The transcript with only the lines at `indexes` and the agent's line before each
    said (the others emptied, every index kept): the field head reads each clause with the
    question before it alone, so the lines it reads are read as in the whole transcript."""
    asked = {i - 1 for i in indexes if i > 0 and transcript[i - 1].role is not Role.SUBJECT}
    keep = set(indexes) | asked
    return [m if i in keep else replace(m, text="") for i, m in enumerate(transcript)]
