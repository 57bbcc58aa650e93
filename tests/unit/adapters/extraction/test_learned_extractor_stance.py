"""The learned extractor's QA answers screened by an answer-stance reader (ADR 0121): an
answer whose sentence does not state its value is dropped before a field's best is chosen,
and one read as stated tentatively carries its sentence's hedge as its condition."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.stance_screen import reader_answers
from factledger.application.judgement.stance import ReaderAnswer, Stance, StanceReading
from factledger.application.judgement.types import FieldStatement, Judgement, Reply, Statement
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionRequest,
    FieldSlot,
)
from factledger.domain.transcript import Message, Role

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)
DENIED = "We don't use any outside supplier."
STATED = "Our flour comes from Millstone Grain."
MAYBE = "We might move to Globex Freight next year."


@dataclass
class NoRules:
    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return []


@dataclass
class Answers:
    """A judge whose only reading is the field answers the test gives; every sentence plain."""

    stated: tuple[FieldStatement, ...]

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        own = Judgement(Statement.SELF, 0.9, hedged=False, forget_request=False, correction=False)
        return [own for _ in sentences]

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return [Reply.NEITHER for _ in pairs]

    async def field_of(self, sentence: str, fields: Sequence[str]) -> tuple[str, float] | None:
        return None

    async def field_statements(
        self, transcript: Sequence[Message], fields: Sequence[str], lists: Collection[str] = ()
    ) -> list[FieldStatement]:
        return [s for s in self.stated if s.field in fields]


@dataclass
class StanceBySentence:
    """The stance of each sentence, given by the test; it records what it was asked."""

    stances: dict[str, Stance]
    asked: list[ReaderAnswer] = field(default_factory=list)

    async def read(self, answers: Sequence[ReaderAnswer]) -> list[StanceReading]:
        self.asked += answers
        out = []
        for a in answers:
            stance = self.stances.get(a.sentence, Stance.STATES)
            kept = stance in (Stance.STATES, Stance.HEDGED)
            out.append(StanceReading(stance, 0.9 if kept else 0.1, kept))
        return out


def _request(*lines: str) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(Role.SUBJECT, line, AT) for line in lines],
        occurred_at=AT,
        fields=(FieldSlot("supplier", "supplier"),),
    )


async def test_a_denied_answer_goes_and_the_fields_next_best_answer_stands_in() -> None:
    judge = Answers(
        (
            FieldStatement(0, "outside supplier", "supplier", 9.0),
            FieldStatement(1, "Millstone Grain", "supplier", 7.0),
        )
    )
    stance = StanceBySentence({DENIED: Stance.DENIES})

    facts = await LearnedExtractor(NoRules(), judge, stance=stance).extract(
        _request(DENIED, STATED)
    )

    assert [(f.slot, f.value, f.condition) for f in facts] == [
        ("supplier", "Millstone Grain", None)
    ]
    assert [a.sentence for a in stance.asked] == [DENIED, STATED]


async def test_without_a_stance_reader_the_best_answer_is_kept_as_before() -> None:
    judge = Answers(
        (
            FieldStatement(0, "outside supplier", "supplier", 9.0),
            FieldStatement(1, "Millstone Grain", "supplier", 7.0),
        )
    )

    facts = await LearnedExtractor(NoRules(), judge).extract(_request(DENIED, STATED))

    assert [f.value for f in facts] == ["outside supplier"]


async def test_an_answer_read_as_hedged_is_proposed_with_its_sentences_hedge() -> None:
    judge = Answers((FieldStatement(0, "Globex Freight", "supplier", 9.0),))
    stance = StanceBySentence({MAYBE: Stance.HEDGED})

    facts = await LearnedExtractor(NoRules(), judge, stance=stance).extract(_request(MAYBE))

    assert [(f.value, f.condition) for f in facts] == [
        ("Globex Freight", "We might move to next year")
    ]


def test_each_answer_is_read_beside_the_other_fields_reading_of_the_same_words() -> None:
    transcript = [
        Message(Role.AGENT, "Who supplies you?", AT),
        Message(Role.SUBJECT, "Millstone Grain, since May. Before that, Acme.", AT),
    ]
    found = [
        FieldStatement(1, "Millstone Grain", "supplier", 9.0),
        FieldStatement(1, "Millstone Grain", "name", 6.0),
        FieldStatement(1, "Acme", "supplier", 7.0),
    ]

    read = reader_answers(transcript, found, lists={"supplier"})

    assert [(a.sentence, a.rival, a.best, a.many) for a in read] == [
        ("Millstone Grain, since May.", 6.0, 9.0, True),
        ("Millstone Grain, since May.", 9.0, 6.0, False),
        ("Before that, Acme.", 0.0, 9.0, True),
    ]
