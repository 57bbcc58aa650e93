"""The learned extractor keeps the rules' facts the subject states about themself and drops
those their sentence gives as someone else's, small talk, a question or a request to forget."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.stance_screen import reader_answers
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.application.judgement.stance import ReaderAnswer, Stance, StanceReading
from factledger.application.judgement.types import FieldStatement, Judgement, Reply, Statement
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionRequest,
    FieldSlot,
)
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)


def _said(*lines: tuple[Role, str]) -> ExtractionRequest:
    return ExtractionRequest([Message(role, text, AT) for role, text in lines], occurred_at=AT)


@dataclass
class FixedRules:
    """The rules' candidates, given by the test."""

    facts: list[ExtractedFact]

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return list(self.facts)


@dataclass
class JudgeBySentence:
    """A judgement per sentence, given by the test; any other sentence is about the subject."""

    verdicts: dict[str, Judgement]

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        own = Judgement(Statement.SELF, 0.9, hedged=False, forget_request=False, correction=False)
        return [self.verdicts.get(s, own) for s in sentences]

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return [Reply.NEITHER for _ in pairs]

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        return [0.0 for _ in texts]

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]:
        self.asks.append((tuple(fields), tuple(lists), tuple(held)))
        return [s for s in self.stated if s.field in fields]

    stated: tuple[FieldStatement, ...] = ()
    # What each reading of fields asked: the fields, the lists, the held fields.
    asks: list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=list
    )


def _about(statement: Statement, p: float, *, forget: bool = False) -> Judgement:
    return Judgement(statement, p, hedged=False, forget_request=forget, correction=False)


async def test_facts_standing_on_a_sentence_about_someone_else_or_a_forget_request_go() -> None:
    own = ExtractedFact("f0", "works at Globex", "employer", (0,), value="Globex")
    sister = ExtractedFact("f1", "works at Acme", "employer", (0,), value="Acme")
    forget = ExtractedFact("f2", "phone is 555 0101", "phone", (1,), value="555 0101")
    derived = ExtractedFact(
        "f3", "may be a big account", "insight", (0,), RelationKind.DERIVES, ("f1",), True
    )
    rules = FixedRules([own, sister, forget, derived])
    judge = JudgeBySentence(
        {
            "My sister works at Acme.": _about(Statement.THIRD_PARTY, 0.9),
            "Please delete my phone 555 0101.": _about(Statement.SELF, 0.9, forget=True),
        }
    )
    request = _said(
        (Role.SUBJECT, "I work at Globex. My sister works at Acme."),
        (Role.SUBJECT, "Please delete my phone 555 0101."),
    )

    facts = await LearnedExtractor(rules, judge).extract(request)

    assert [f.key for f in facts] == ["f0"]  # the inference rested on the dropped fact only


async def test_an_unsure_judgement_keeps_the_fact_and_a_kept_fact_names_no_dropped_one() -> None:
    budget = ExtractedFact("f0", "budget is 40k", "budget", (0,), value="40k")
    guest = ExtractedFact("f1", "guest count 30", "team_size", (0,), value="30")
    linked = ExtractedFact(
        "f2", "budget covers the team", "budget", (0,), RelationKind.EXTENDS, ("f0", "f1")
    )
    judge = JudgeBySentence(
        {
            "Budget is 40k.": _about(Statement.QUESTION, 0.55),  # not sure enough to drop
            "Lovely, 30 guests came to the party.": _about(Statement.SMALL_TALK, 0.8),
        }
    )
    request = _said((Role.SUBJECT, "Budget is 40k. Lovely, 30 guests came to the party."))

    facts = await LearnedExtractor(FixedRules([budget, guest, linked]), judge).extract(request)

    assert [f.key for f in facts] == ["f0", "f2"]
    assert facts[1].related_to == ("f0",)


async def test_fields_the_rules_fed_nothing_take_the_clauses_the_judge_reads_as_stating_them() -> (
    None
):
    rules = FixedRules([ExtractedFact("f0", "budget is 40k", "budget", (0,), value="40k")])
    judge = JudgeBySentence(
        {},
        stated=(
            FieldStatement(0, "ours is 50k", "budget", 0.97),  # the rules fed the budget
            FieldStatement(0, "the gold tier", "membership", 0.95),
            FieldStatement(1, "platinum tier now", "membership", 0.99),
            FieldStatement(0, "peanuts", "allergies", 0.96),
            FieldStatement(1, "and shellfish", "allergies", 0.98),
        ),
    )
    request = ExtractionRequest(
        [
            Message(Role.SUBJECT, "Budget is 40k, ours is 50k, the gold tier, peanuts.", AT),
            Message(Role.SUBJECT, "platinum tier now, and shellfish", AT),
        ],
        occurred_at=AT,
        fields=(
            FieldSlot("budget", "budget"),
            FieldSlot("membership", "tier"),
            FieldSlot("allergies", "allergies", many=True),
        ),
    )

    facts = await LearnedExtractor(rules, judge).extract(request)

    said = [(f.slot, f.value, f.source_indexes) for f in facts]
    assert said == [
        ("budget", "40k", (0,)),
        ("tier", "platinum tier now", (1,)),  # one value: the most probable clause
        ("allergies", "peanuts", (0,)),  # a list: every clause, in the order said
        ("allergies", "and shellfish", (1,)),
    ]


async def test_a_held_field_may_take_the_latest_said_answer_not_the_most_probable() -> None:
    """ADR 0128's option: where the subject says a held field again, what they end on."""
    judge = JudgeBySentence(
        {},
        stated=(
            FieldStatement(0, "Gold", "tier", 9.0),
            FieldStatement(0, "Silver", "tier", 6.0),
            FieldStatement(0, "Lyon", "city", 9.0),
            FieldStatement(0, "Paris", "city", 6.0),
        ),
    )
    request = ExtractionRequest(
        [Message(Role.SUBJECT, "Not Gold, it is Silver; moving from Lyon to Paris.", AT)],
        occurred_at=AT,
        fields=(FieldSlot("tier", "tier", held=True), FieldSlot("city", "city")),
    )

    latest = await LearnedExtractor(FixedRules([]), judge, latest_of_held=True).extract(request)
    best = await LearnedExtractor(FixedRules([]), judge).extract(request)

    assert [(f.slot, f.value) for f in latest] == [("tier", "Silver"), ("city", "Lyon")]
    assert [(f.slot, f.value) for f in best] == [("tier", "Gold"), ("city", "Lyon")]


async def test_a_held_field_the_rules_feed_by_a_keyed_slot_is_not_read_as_held() -> None:
    """The rules' "intent:..." fact states the held intent with its condition: the reader
    reads the field at its own floor there, not the held one (ADR 0128)."""
    rules = FixedRules(
        [ExtractedFact("f0", "adds shifts", "intent:add_shifts", (0,), value="add shifts")]
    )
    request = ExtractionRequest(
        [Message(Role.SUBJECT, "We plan to add shifts, as long as demand holds.", AT)],
        occurred_at=AT,
        fields=(
            FieldSlot("purchase_intent", "intent", held=True),
            FieldSlot("budget", "budget", held=True),
        ),
    )

    judge = JudgeBySentence({})

    await LearnedExtractor(rules, judge, asks_every_field=True).extract(request)

    assert [held for _, _, held in judge.asks] == [("budget",)]


async def test_a_reader_that_reads_every_field_at_once_is_asked_them_all() -> None:
    """The rules fed the budget; the one-pass reader is still asked it (its fields compete
    for a line's words), and what it reads for the budget proposes nothing. The single-valued
    fields the subject holds and the rules fed nothing are named to it as held (ADR 0128), a
    list field never."""
    rules = FixedRules([ExtractedFact("f0", "budget is 40k", "budget", (0,), value="40k")])
    judge = JudgeBySentence(
        {},
        stated=(
            FieldStatement(0, "50k", "budget", 9.0),
            FieldStatement(0, "gold tier", "membership", 7.0),
        ),
    )
    request = ExtractionRequest(
        [Message(Role.SUBJECT, "Budget is 40k, ours is 50k, the gold tier.", AT)],
        occurred_at=AT,
        fields=(
            FieldSlot("budget", "budget", held=True),
            FieldSlot("membership", "tier", held=True),
            FieldSlot("allergies", "allergies", many=True, held=True),
        ),
    )

    every = await LearnedExtractor(rules, judge, asks_every_field=True).extract(request)
    wanted = await LearnedExtractor(rules, judge).extract(request)

    asked, listed, holding = (list(a) for a in zip(*judge.asks, strict=True))
    assert asked == [("budget", "membership", "allergies"), ("membership", "allergies")]
    assert listed == [("allergies",), ("allergies",)]
    assert holding == [("membership",), ("membership",)]  # the rules' budget: not as held
    assert [(f.slot, f.value) for f in every] == [("budget", "40k"), ("tier", "gold tier")]
    assert [(f.slot, f.value) for f in wanted] == [(f.slot, f.value) for f in every]


async def test_a_fact_said_in_a_tentative_sentence_carries_its_hedge_as_its_condition() -> None:
    """The ledger refuses a stated change quoting a tentative sentence without a condition
    (`domain.hedges`): the hedge goes with the fact, read by the judge on that sentence."""
    rules = FixedRules([ExtractedFact("f0", "budget is 40k", "budget", (0,), value="40k")])
    hedged = Judgement(Statement.SELF, 0.9, hedged=True, forget_request=False, correction=False)
    judge = JudgeBySentence(
        {"So, realistically, I'd need 135 now.": hedged},
        stated=(FieldStatement(0, "I'd need 135 now", "salary", 9.0),),
    )
    request = ExtractionRequest(
        [Message(Role.SUBJECT, "Budget is 40k. So, realistically, I'd need 135 now.", AT)],
        occurred_at=AT,
        fields=(FieldSlot("budget", "budget"), FieldSlot("salary", "salary")),
    )

    facts = await LearnedExtractor(rules, judge).extract(request)

    assert [(f.slot, f.value, f.condition) for f in facts] == [
        ("budget", "40k", None),  # a plain sentence keeps none
        ("salary", "I'd need 135 now", "So, realistically"),
    ]


async def test_a_value_with_full_stops_inside_is_judged_in_its_sentence_as_said() -> None:
    """The hedge is read on the sentence the subject said, never cut inside the value's
    words (ADR 0180): the condition is the words around the value, without it."""
    line = "Maybe use anna2@example.com for now. Version 8.3.1 is ours."
    rules = FixedRules(
        [
            ExtractedFact("f0", "email", "contact_channel", (0,), value="anna2@example.com"),
            ExtractedFact("f1", "version", "product_version", (0,), value="8.3.1"),
        ]
    )
    hedged = Judgement(Statement.SELF, 0.9, hedged=True, forget_request=False, correction=False)
    judge = JudgeBySentence({"Maybe use anna2@example.com for now.": hedged})
    request = ExtractionRequest(
        [Message(Role.SUBJECT, line, AT)],
        occurred_at=AT,
        fields=(
            FieldSlot("contact_channel", "contact_channel"),
            FieldSlot("product_version", "product_version"),
        ),
    )

    facts = await LearnedExtractor(rules, judge).extract(request)

    assert [(f.slot, f.value, f.condition) for f in facts] == [
        ("contact_channel", "anna2@example.com", "Maybe use for now"),
        ("product_version", "8.3.1", None),
    ]


async def test_a_hedged_sentences_answer_carries_the_sentence_as_its_condition() -> None:
    """The heads read the second line as hedged: its answer keeps the sentence's hedge as
    its condition, so the ledger's hedge rule does not refuse it; a plain line's carries none."""
    hedged = "Maybe the platinum one next year."
    unsure = Judgement(Statement.SELF, 0.9, hedged=True, forget_request=False, correction=False)
    judge = JudgeBySentence(
        {hedged: unsure},
        stated=(
            FieldStatement(1, "the platinum one", "membership", 6.0),
            FieldStatement(0, "Dana", "name", 8.0),
        ),
    )
    request = ExtractionRequest(
        [
            Message(Role.SUBJECT, "I'm Dana, on the gold tier.", AT),
            Message(Role.SUBJECT, hedged, AT),
        ],
        occurred_at=AT,
        fields=(FieldSlot("name", "name"), FieldSlot("membership", "tier")),
    )

    facts = await LearnedExtractor(FixedRules([]), judge).extract(request)

    said = [(f.slot, f.value, f.source_indexes, f.condition) for f in facts]
    assert said == [
        ("name", "Dana", (0,), None),
        ("tier", "the platinum one", (1,), "Maybe next year"),
    ]


@pytest.fixture(scope="module")
def learned() -> LearnedExtractor:
    return LearnedExtractor(RuleExtractor(), LearnedJudge.packaged())


async def test_with_the_shipped_judge_the_subjects_own_statements_keep_their_facts(
    learned: LearnedExtractor,
) -> None:
    request = _said(
        (Role.AGENT, "Who do you buy packaging from, and what can you spend?"),
        (Role.SUBJECT, "We buy our packaging from Boxmart. Our budget is 40,000 dollars."),
    )

    ruled = {(f.slot, f.value) for f in await learned.rules.extract(request)}
    kept = {(f.slot, f.value) for f in await learned.extract(request)}

    assert {("supplier", "Boxmart"), ("budget", "40,000 dollars")} <= ruled
    assert kept == ruled


# The QA answers screened by an answer-stance reader (ADR 0121): an answer whose sentence
# does not state its value goes before a field's best is chosen; one read as stated
# tentatively carries its sentence's hedge as its condition.

DENIED = "We don't use any outside supplier."
STATED = "Our flour comes from Millstone Grain."
MAYBE = "We might move to Globex Freight next year."


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


def _asked_supplier(*lines: str) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(Role.SUBJECT, line, AT) for line in lines],
        occurred_at=AT,
        fields=(FieldSlot("supplier", "supplier"),),
    )


async def test_a_denied_answer_goes_and_the_fields_next_best_answer_stands_in() -> None:
    judge = JudgeBySentence(
        {},
        stated=(
            FieldStatement(0, "outside supplier", "supplier", 9.0),
            FieldStatement(1, "Millstone Grain", "supplier", 7.0),
        ),
    )
    stance = StanceBySentence({DENIED: Stance.DENIES})

    facts = await LearnedExtractor(FixedRules([]), judge, stance=stance).extract(
        _asked_supplier(DENIED, STATED)
    )

    assert [(f.slot, f.value, f.condition) for f in facts] == [
        ("supplier", "Millstone Grain", None)
    ]
    assert [a.sentence for a in stance.asked] == [DENIED, STATED]


async def test_without_a_stance_reader_the_best_answer_is_kept_as_before() -> None:
    judge = JudgeBySentence(
        {},
        stated=(
            FieldStatement(0, "outside supplier", "supplier", 9.0),
            FieldStatement(1, "Millstone Grain", "supplier", 7.0),
        ),
    )

    facts = await LearnedExtractor(FixedRules([]), judge).extract(_asked_supplier(DENIED, STATED))

    assert [f.value for f in facts] == ["outside supplier"]


async def test_an_answer_read_as_hedged_is_proposed_with_its_sentences_hedge() -> None:
    judge = JudgeBySentence({}, stated=(FieldStatement(0, "Globex Freight", "supplier", 9.0),))
    stance = StanceBySentence({MAYBE: Stance.HEDGED})

    facts = await LearnedExtractor(FixedRules([]), judge, stance=stance).extract(
        _asked_supplier(MAYBE)
    )

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
