"""The QA reader's answers under its floor, kept where the heads' clause reading agrees."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import cast

from factledger.adapters.judgement.fields import clauses_of
from factledger.adapters.judgement.qa_reader.agreement import (
    agree,
    agreed_statements,
    kept,
    only_clauses,
    only_lines,
)
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.application.judgement.types import FieldStatement
from factledger.domain.transcript import Message, Role

READER = QaFieldReader(b"", floor=5.5, list_floor=6.0)


def _said(index: int, clause: str, name: str, p: float) -> FieldStatement:
    return FieldStatement(index, clause, name, p)


def test_a_clause_agrees_with_an_answer_of_its_field_and_line_one_holding_the_other() -> None:
    answer = _said(1, "Delta Dental", "insurer", 2.0)

    assert agree(answer, _said(1, "my insurer is Delta Dental", "insurer", 0.7))
    assert agree(answer, _said(1, "Delta", "insurer", 0.7))
    assert not agree(answer, _said(3, "my insurer is Delta Dental", "insurer", 0.7))
    assert not agree(answer, _said(1, "my insurer is Delta Dental", "employer", 0.7))
    assert not agree(answer, _said(1, "I moved last year", "insurer", 0.7))


def test_answers_over_the_floor_stay_and_those_under_it_only_where_a_clause_agrees() -> None:
    over = _said(1, "Hollis Freight", "current_employer", 7.0)
    agreed = _said(3, "135", "salary_expectation", 2.0)
    alone = _said(3, "base", "notice_period", 2.0)
    list_item = _said(5, "Python", "skills", 5.8)  # over the floor, under the list floor
    clauses = [_said(3, "I'd need 135 now to move", "salary_expectation", 0.6)]

    found = kept([over, agreed, alone, list_item], clauses, READER, {"skills"})

    assert found == [over, agreed]


@dataclass
class ClauseReader:
    """The heads' clause reading, as a fake: what it gives, and whether it was asked."""

    clauses: list[FieldStatement]
    asked: list[tuple[str, ...]] = field(default_factory=list)

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]:
        self.asked.append(tuple(fields))
        return self.clauses


@dataclass
class FloorReader:
    """The QA reader, as a fake that gives its answers from the floor it is asked at."""

    answers: list[FieldStatement]
    floor: float = 5.5
    list_floor: float | None = 6.0

    def floor_of(self, field_name: str, lists: Collection[str]) -> float:
        return READER.floor_of(field_name, lists)

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        floor: float | None = None,
    ) -> list[FieldStatement]:
        bar = self.floor if floor is None else floor
        return [a for a in self.answers if a.p >= bar]


def _reader(*answers: FieldStatement) -> QaFieldReader:
    return cast("QaFieldReader", FloorReader(list(answers)))


async def test_the_heads_read_only_when_an_answer_under_the_floor_is_to_be_decided() -> None:
    said = [Message(Role.AGENT, "Which insurer?"), Message(Role.SUBJECT, "Delta Dental.")]
    sure = _said(1, "Delta Dental", "insurer", 8.0)
    heads = ClauseReader([_said(1, "Delta Dental", "insurer", 0.9)])

    assert await agreed_statements(_reader(sure), heads, said, ["insurer"], (), 1.0) == [sure]
    assert heads.asked == []

    unsure = _said(1, "Delta Dental", "insurer", 3.0)
    below = _said(1, "Dental", "employer", 0.5)  # under the agreement floor itself
    fields = ["insurer", "employer"]
    found = await agreed_statements(_reader(unsure, below), heads, said, fields, (), 1.0)

    assert found == [unsure]
    assert heads.asked == [("insurer", "employer")]


async def test_no_clause_holding_an_answer_under_the_floor_leaves_the_heads_unasked() -> None:
    said = [Message(Role.SUBJECT, "We use Delta Dental, I think.")]
    unsure = _said(0, "Aetna", "insurer", 3.0)  # the reader's words, in no clause of the line
    heads = ClauseReader([_said(0, "Aetna", "insurer", 0.9)])

    assert await agreed_statements(_reader(unsure), heads, said, ["insurer"], (), 1.0) == []
    assert heads.asked == []


async def test_an_answer_under_the_floor_of_a_field_answered_over_it_is_not_decided() -> None:
    said = [Message(Role.SUBJECT, "Delta Dental. Or Aetna, I forget.")]
    sure = _said(0, "Delta Dental", "insurer", 8.0)
    other = _said(0, "Aetna", "insurer", 2.0)  # never proposed: the field's best is `sure`
    heads = ClauseReader([_said(0, "Or Aetna", "insurer", 0.9)])

    found = await agreed_statements(_reader(sure, other), heads, said, ["insurer"], (), 1.0)

    assert found[0] == sure
    assert heads.asked == []


def test_the_heads_read_only_the_lines_to_decide_and_the_question_before_each() -> None:
    said = [
        Message(Role.AGENT, "Hi, who is this?"),
        Message(Role.SUBJECT, "Priya."),
        Message(Role.AGENT, "Which insurer?"),
        Message(Role.SUBJECT, "Delta Dental."),
        Message(Role.SUBJECT, "Also, I moved."),
    ]

    read = only_lines(said, {3, 4})

    assert [m.text for m in read] == ["", "", "Which insurer?", "Delta Dental.", "Also, I moved."]
    assert [m.role for m in read] == [m.role for m in said]


def test_the_heads_read_only_the_clauses_that_hold_an_answer_or_that_it_holds() -> None:
    said = [
        Message(Role.AGENT, "Hi, who is this?"),
        Message(Role.SUBJECT, "Priya, hi."),
        Message(Role.AGENT, "Which insurer?"),
        Message(Role.SUBJECT, "Well, it was Aetna; now Delta Dental, since 4.2.2024. Thanks!"),
    ]
    answers = [_said(3, "Delta Dental", "insurer", 3.0), _said(3, "since 4.2.2024", "since", 2.0)]

    read = only_clauses(said, answers)

    assert [m.text for m in read] == ["", "", "Which insurer?", "now Delta Dental; since 4.2.2024"]
    assert clauses_of(read[3].text) == ["now Delta Dental", "since 4.2.2024"]
