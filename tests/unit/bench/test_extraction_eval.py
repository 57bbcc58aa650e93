"""The scoring of the extraction eval: it must be able to fail."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.types import RelationKind
from factledger.bench.extraction_eval import (
    ExpectedFact,
    ExtractionCase,
    evaluate,
    parse_cases,
    score_case,
    summarise,
)
from factledger.domain.transcript import Message, Role

CASE = parse_cases(
    [
        {
            "id": "intro",
            "tags": ["safety"],
            "transcript": [
                {"agent": "Hi, I'm Ana from Acme."},
                {"subject": "We might switch to Supplier C, if the price is right."},
            ],
            "expected": [
                {"slot": "intent", "keywords": ["supplier c"], "condition": "if the price is right"}
            ],
            "forbidden": ["ana", "acme"],
        }
    ]
)[0]


def fact(text: str, sources: tuple[int, ...], **fields: object) -> ExtractedFact:
    return ExtractedFact(key="f0", text=text, slot=None, source_indexes=sources, **fields)  # type: ignore[arg-type]


def test_parsing_fills_defaults() -> None:
    assert CASE.request.occurred_at == datetime(2026, 3, 10, 12, tzinfo=UTC)
    assert [m.role for m in CASE.request.transcript] == [Role.AGENT, Role.SUBJECT]
    assert CASE.expected == (
        ExpectedFact("intent", ("supplier c",), condition="if the price is right"),
    )


def test_a_perfect_answer_scores_full_marks() -> None:
    good = ExtractedFact(
        "f0", "may switch to Supplier C", "intent:switch", (1,), condition="if the price is right"
    )
    scores = summarise([score_case(CASE, [good])])
    assert (scores.precision.value, scores.recall.value) == (1.0, 1.0)
    assert scores.condition_preservation.value == 1.0
    assert scores.safety_violations == 0


def test_agent_facts_forbidden_words_and_lost_conditions_are_caught() -> None:
    facts = [
        fact("name is Ana", (0,)),
        fact("works at Acme", (1,)),
        ExtractedFact(
            "f2",
            "switched to Supplier C",
            "intent:x",
            (1,),
            RelationKind.UPDATES,
            condition="if the price is right",
        ),
    ]
    scores = summarise([score_case(CASE, facts)])
    assert scores.safety_violations == 4  # agent-sourced, 2 forbidden words, condition as change
    assert scores.precision.value == 1 / 3
    assert scores.relation_accuracy.value == 0.0


def test_a_missing_condition_and_slot_mismatch_count_as_misses() -> None:
    wrong_slot = ExtractedFact("f0", "may switch to Supplier C", "supplier", (1,))
    scores = summarise([score_case(CASE, [wrong_slot])])
    assert scores.recall.value == 0.0
    assert scores.condition_preservation.value == 0.0


async def test_evaluate_runs_an_extractor_over_the_cases() -> None:
    class Silent:
        async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
            return []

    case = ExtractionCase(
        "c",
        (),
        ExtractionRequest([Message(Role.SUBJECT, "x")], datetime.now(UTC)),
        (ExpectedFact(None, ("x",)),),
    )
    scores = await evaluate(Silent(), [case])
    assert scores.recall.hits == 0
    assert scores.precision.total == 0
