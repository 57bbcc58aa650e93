"""A value the agent says back and the subject's next line confirms is proposed (ADR 0138):
only where the answer judge reads the reply's first sentence as a yes to the agent's line,
only a subject's line confirms, and never for a field the subject's own lines state."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.application.judgement.types import FieldStatement, Reply
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionRequest,
    FieldSlot,
)
from factledger.domain.transcript import Message, Role
from tests.unit.adapters.extraction.test_learned_extractor import JudgeBySentence

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)
FIELDS = (FieldSlot("plan", "plan", held=True), FieldSlot("allergies", "allergies", many=True))


class NoRules:
    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return []


@dataclass
class YesTo(JudgeBySentence):
    """Reads the replies given as a yes to their line, any other as neither; the subject's
    lines state what `stated` says."""

    yes: set[tuple[str, str]] = field(default_factory=set)
    replies: list[tuple[str, str]] = field(default_factory=list)

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        self.replies.extend(pairs)
        return [Reply.YES if p in self.yes else Reply.NEITHER for p in pairs]


def _yes_to(*pairs: tuple[str, str], stated: tuple[FieldStatement, ...] = ()) -> YesTo:
    return YesTo(verdicts={}, stated=stated, yes=set(pairs))


@dataclass
class AgentSaid:
    """The values each agent line says, given by the test; records what it was asked."""

    said: tuple[FieldStatement, ...]
    asked: list[tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=list
    )
    floors: list[float | None] = field(default_factory=list)

    async def read_backs(
        self,
        transcript: Sequence[Message],
        indexes: Collection[int],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
        floor: float | None = None,
    ) -> list[FieldStatement]:
        self.asked.append((tuple(sorted(indexes)), tuple(fields), tuple(lists), tuple(held)))
        self.floors.append(floor)
        bar = -1e9 if floor is None else floor
        return [
            s for s in self.said if s.message_index in indexes and s.field in fields and s.p >= bar
        ]


def _request(*lines: tuple[Role, str]) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(role, text, AT) for role, text in lines], occurred_at=AT, fields=FIELDS
    )


PREMIUM = FieldStatement(0, "Premium", "plan", 7.0)
LATEX = FieldStatement(2, "latex", "allergies", 8.0)
PENICILLIN = FieldStatement(2, "penicillin", "allergies", 7.5)


async def test_a_value_read_back_and_confirmed_is_a_fact_citing_both_lines() -> None:
    judge = _yes_to(("So you're on Premium now?", "Yep, that's it."))
    reader = AgentSaid((PREMIUM,))
    request = _request(
        (Role.AGENT, "So you're on Premium now?"),
        (Role.SUBJECT, "Yep, that's it. Can you also send the invoice?"),
    )

    facts = await LearnedExtractor(NoRules(), judge, read_backs=reader).extract(request)

    assert [(f.slot, f.value, f.source_indexes, f.read_back) for f in facts] == [
        ("plan", "Premium", (0, 1), 0)
    ]
    # The yes is read in the reply's first sentence; both fields asked, plan as held.
    assert judge.replies == [("So you're on Premium now?", "Yep, that's it.")]
    assert reader.asked == [((0,), ("plan", "allergies"), ("allergies",), ("plan",))]


async def test_a_reply_that_is_no_yes_or_a_line_no_subject_answers_proposes_nothing() -> None:
    judge = _yes_to(("Allergic to latex and penicillin, right?", "Sure."))
    reader = AgentSaid((PREMIUM, LATEX))
    request = _request(
        (Role.AGENT, "So you're on Premium now?"),
        (Role.SUBJECT, "Not quite."),
        (Role.AGENT, "Allergic to latex and penicillin, right?"),
        (Role.AGENT, "Sure."),  # the agent's own words never confirm
    )

    facts = await LearnedExtractor(NoRules(), judge, read_backs=reader).extract(request)

    assert facts == []
    assert reader.asked == []


async def test_every_confirmed_value_of_a_list_is_proposed_and_a_single_fields_best() -> None:
    second = FieldStatement(2, "Basic", "plan", 6.0)
    judge = _yes_to(
        ("So you're on Premium now?", "Yes."),
        ("Allergic to latex and penicillin, right?", "Correct."),
    )
    reader = AgentSaid((PREMIUM, LATEX, PENICILLIN, second))
    request = _request(
        (Role.AGENT, "So you're on Premium now?"),
        (Role.SUBJECT, "Yes."),
        (Role.AGENT, "Allergic to latex and penicillin, right?"),
        (Role.SUBJECT, "Correct."),
    )

    facts = await LearnedExtractor(NoRules(), judge, read_backs=reader).extract(request)

    assert sorted((f.slot, f.value) for f in facts) == [
        ("allergies", "latex"),
        ("allergies", "penicillin"),
        ("plan", "Premium"),
    ]


async def test_a_field_the_subjects_own_lines_state_is_not_read_back() -> None:
    own = FieldStatement(3, "Basic", "plan", 6.0)
    judge = _yes_to(("So you're on Premium now?", "Yes."), stated=(own,))
    reader = AgentSaid((PREMIUM,))
    request = _request(
        (Role.AGENT, "So you're on Premium now?"),
        (Role.SUBJECT, "Yes."),
        (Role.AGENT, "And since when?"),
        (Role.SUBJECT, "Oh wait, no, still Basic."),
    )

    facts = await LearnedExtractor(NoRules(), judge, read_backs=reader).extract(request)

    assert [(f.slot, f.value, f.read_back) for f in facts] == [("plan", "Basic", None)]
    assert [fields for _, fields, _, _ in reader.asked] == [("allergies",)]


async def test_without_a_read_back_reader_the_agents_lines_are_not_judged() -> None:
    judge = _yes_to(("So you're on Premium now?", "Yes."))
    request = _request((Role.AGENT, "So you're on Premium now?"), (Role.SUBJECT, "Yes."))

    assert await LearnedExtractor(NoRules(), judge).extract(request) == []
    assert judge.replies == []


async def test_a_read_back_ending_on_its_question_mark_is_proposed_without_it() -> None:
    judge = _yes_to(("Your notice is three months?", "Yes."))
    reader = AgentSaid((FieldStatement(0, "three months?", "plan", 9.0),))
    request = _request((Role.AGENT, "Your notice is three months?"), (Role.SUBJECT, "Yes."))

    facts = await LearnedExtractor(NoRules(), judge, read_backs=reader).extract(request)

    assert [(f.value, f.text) for f in facts] == [("three months", "three months")]


async def test_a_read_back_floor_is_the_readers_bar_for_every_confirmed_value() -> None:
    judge = _yes_to(("So you're on Premium now?", "Yes."))
    reader = AgentSaid((PREMIUM,))
    request = _request((Role.AGENT, "So you're on Premium now?"), (Role.SUBJECT, "Yes."))

    high = LearnedExtractor(NoRules(), judge, read_backs=reader, read_back_floor=7.5)
    low = LearnedExtractor(NoRules(), judge, read_backs=reader, read_back_floor=0.0)

    assert await high.extract(request) == []
    assert [f.value for f in await low.extract(request)] == ["Premium"]
    assert reader.floors == [7.5, 0.0]


async def test_an_answer_that_is_only_a_yes_to_a_value_said_back_is_no_value_of_it() -> None:
    # The reader took the yes itself for the plan (ADR 0221): it confirms "Premium".
    bare = FieldStatement(1, "That's right.", "plan", 6.0)
    judge = _yes_to(("So you're on Premium now?", "That's right."), stated=(bare,))
    request = _request((Role.AGENT, "So you're on Premium now?"), (Role.SUBJECT, "That's right."))

    kept = await LearnedExtractor(NoRules(), judge).extract(request)
    said_back = AgentSaid((PREMIUM,))
    dropped = await LearnedExtractor(NoRules(), judge, said_back=said_back).extract(request)
    both = LearnedExtractor(NoRules(), judge, read_backs=said_back, said_back=said_back)

    assert [f.value for f in kept] == ["That's right."]
    assert dropped == []
    assert said_back.asked == [((0,), ("plan",), (), ("plan",))]
    # With read-backs on, the agent's words confirmed are the value instead.
    assert [(f.value, f.read_back) for f in await both.extract(request)] == [("Premium", 0)]


async def test_an_answer_with_words_of_the_question_no_yes_or_no_value_said_back_stays() -> None:
    repeated = FieldStatement(1, "Premium, yes", "plan", 6.0)  # the value said again
    other = FieldStatement(3, "Basic", "plan", 6.5)  # a yes? the judge reads it as neither
    judge = _yes_to(
        ("So you're on Premium now?", "Premium, yes"),
        ("What plan are you on now?", "That's right."),
        stated=(repeated, other, FieldStatement(5, "That's right.", "plan", 5.5)),
    )
    request = _request(
        (Role.AGENT, "So you're on Premium now?"),
        (Role.SUBJECT, "Premium, yes"),
        (Role.AGENT, "And your partner's plan?"),
        (Role.SUBJECT, "Basic"),
        (Role.AGENT, "What plan are you on now?"),  # says no value back
        (Role.SUBJECT, "That's right."),
    )
    said_back = AgentSaid((PREMIUM,))

    facts = await LearnedExtractor(NoRules(), judge, said_back=said_back).extract(request)

    assert [f.value for f in facts] == ["Basic"]  # the plan's best answer, none dropped
    assert judge.replies == []  # no answer was both doubtful and after a value said back
