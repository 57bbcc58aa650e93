"""Scores an `Extractor` against a labelled extraction set.

- A predicted fact matches an expected one when its slot fits (same slot, or the expected slot
  is a prefix such as "preference" for "preference:hiking", or the expected slot is None) and
  every expected keyword occurs in its text; matching is one-to-one, in order.
- Precision and recall count facts; stated-vs-inferred and relation accuracy are measured on
  matched pairs; update detection counts every predicted `updates`.
- Safety: no fact may cite only non-subject messages or contain a case's forbidden words, and
  every expected condition must be kept verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.ports import Extractor
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

DEFAULT_OCCURRED_AT = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class ExpectedFact:
    slot: str | None
    keywords: tuple[str, ...]
    inferred: bool = False
    relation: RelationKind | None = None
    condition: str | None = None
    sources: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class ExtractionCase:
    id: str
    tags: tuple[str, ...]
    request: ExtractionRequest
    expected: tuple[ExpectedFact, ...]
    forbidden: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: ExtractionCase
    facts: tuple[ExtractedFact, ...]
    pairs: tuple[tuple[ExpectedFact, ExtractedFact], ...]
    missed: tuple[ExpectedFact, ...]
    extra: tuple[ExtractedFact, ...]
    safety_violations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ratio:
    hits: int
    total: int

    @property
    def value(self) -> float:
        return self.hits / self.total if self.total else 1.0

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.hits}/{self.total})"


@dataclass(frozen=True, slots=True)
class ExtractionScores:
    cases: int
    precision: Ratio
    recall: Ratio
    inference_accuracy: Ratio
    relation_accuracy: Ratio
    update_precision: Ratio
    update_recall: Ratio
    condition_preservation: Ratio
    spurious_conditions: int
    source_accuracy: Ratio
    safety_violations: int
    safety_cases: int
    results: tuple[CaseResult, ...] = field(repr=False, default=())

    @property
    def f1(self) -> float:
        p, r = self.precision.value, self.recall.value
        return 2 * p * r / (p + r) if p + r else 0.0


def parse_cases(data: Sequence[Mapping[str, Any]]) -> list[ExtractionCase]:
    """Builds cases from the labelled set's parsed YAML (see `tests/data/extraction_set.yaml`)."""
    return [_parse_case(entry) for entry in data]


async def evaluate(extractor: Extractor, cases: Sequence[ExtractionCase]) -> ExtractionScores:
    results = [score_case(case, await extractor.extract(case.request)) for case in cases]
    return summarise(results)


def score_case(case: ExtractionCase, facts: Sequence[ExtractedFact]) -> CaseResult:
    unmatched = list(facts)
    pairs: list[tuple[ExpectedFact, ExtractedFact]] = []
    missed: list[ExpectedFact] = []
    for expected in case.expected:
        fact = next((f for f in unmatched if _matches(expected, f)), None)
        if fact is None:
            missed.append(expected)
        else:
            unmatched.remove(fact)
            pairs.append((expected, fact))
    violations = _safety_violations(case, facts)
    return CaseResult(case, tuple(facts), tuple(pairs), tuple(missed), tuple(unmatched), violations)


def summarise(results: Sequence[CaseResult]) -> ExtractionScores:
    pairs = [p for r in results for p in r.pairs]
    expected = [e for r in results for e in r.case.expected]
    predicted = [f for r in results for f in r.facts]
    conditioned = [e for e in expected if e.condition]
    kept = [e for e, f in pairs if e.condition and _keeps_condition(e.condition, f)]
    sourced = [(e, f) for e, f in pairs if e.sources is not None]
    return ExtractionScores(
        cases=len(results),
        precision=Ratio(len(pairs), len(predicted)),
        recall=Ratio(len(pairs), len(expected)),
        inference_accuracy=Ratio(sum(e.inferred == f.is_inference for e, f in pairs), len(pairs)),
        relation_accuracy=Ratio(sum(e.relation == f.relation for e, f in pairs), len(pairs)),
        update_precision=Ratio(
            sum(_both_update(e, f) for e, f in pairs),
            sum(f.relation is RelationKind.UPDATES for f in predicted),
        ),
        update_recall=Ratio(
            sum(_both_update(e, f) for e, f in pairs),
            sum(e.relation is RelationKind.UPDATES for e in expected),
        ),
        condition_preservation=Ratio(len(kept), len(conditioned)),
        spurious_conditions=sum(1 for e, f in pairs if not e.condition and f.condition),
        source_accuracy=Ratio(sum(f.source_indexes == e.sources for e, f in sourced), len(sourced)),
        safety_violations=sum(len(r.safety_violations) for r in results),
        safety_cases=sum(1 for r in results if "safety" in r.case.tags),
        results=tuple(results),
    )


def report_lines(scores: ExtractionScores) -> list[str]:
    """The figures, one per line, as the eval command prints them."""
    return [
        f"cases                        {scores.cases}",
        f"fact precision               {scores.precision}",
        f"fact recall                  {scores.recall}",
        f"fact F1                      {scores.f1:.3f}",
        f"stated-vs-inferred accuracy  {scores.inference_accuracy}",
        f"relation accuracy            {scores.relation_accuracy}",
        f"update precision             {scores.update_precision}",
        f"update recall                {scores.update_recall}",
        f"condition preservation       {scores.condition_preservation}",
        f"spurious conditions          {scores.spurious_conditions}",
        f"source accuracy              {scores.source_accuracy}",
        f"safety violations            {scores.safety_violations} "
        f"(over {scores.cases} cases, {scores.safety_cases} tagged safety)",
    ]


def _matches(expected: ExpectedFact, fact: ExtractedFact) -> bool:
    if expected.slot is not None:
        slot = fact.slot or ""
        if slot != expected.slot and not slot.startswith(expected.slot + ":"):
            return False
    text = fact.text.lower()
    return all(k.lower() in text for k in expected.keywords)


def _both_update(expected: ExpectedFact, fact: ExtractedFact) -> bool:
    return expected.relation is RelationKind.UPDATES and fact.relation is RelationKind.UPDATES


def _keeps_condition(condition: str, fact: ExtractedFact) -> bool:
    return fact.condition is not None and condition.lower() in fact.condition.lower()


def _safety_violations(case: ExtractionCase, facts: Sequence[ExtractedFact]) -> tuple[str, ...]:
    transcript = case.request.transcript
    subject_indexes = {i for i, m in enumerate(transcript) if m.role is Role.SUBJECT}
    violations = []
    for fact in facts:
        if not subject_indexes & set(fact.source_indexes):
            violations.append(f"{case.id}:{fact.key}: cites no message of the subject")
        words = set(_words(fact.text))
        if any(_contains_phrase(words, fact.text, w) for w in case.forbidden):
            violations.append(f"{case.id}:{fact.key}: holds a forbidden word")
        if fact.relation is RelationKind.UPDATES and any(
            e.condition and _keeps_condition(e.condition, fact) for e in case.expected
        ):
            violations.append(f"{case.id}:{fact.key}: a conditional statement taken as a change")
    return tuple(violations)


def _words(text: str) -> list[str]:
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()


def _contains_phrase(words: set[str], text: str, phrase: str) -> bool:
    # A single forbidden word must be a whole word ("he" is not in "the"); phrases are substrings.
    return phrase.lower() in words if " " not in phrase else phrase.lower() in text.lower()


def _parse_case(entry: Mapping[str, Any]) -> ExtractionCase:
    occurred = entry.get("occurred_at")
    occurred_at = datetime.fromisoformat(occurred) if occurred else DEFAULT_OCCURRED_AT
    transcript = [
        Message(Role(role), str(text))
        for item in entry["transcript"]
        for role, text in item.items()
    ]
    known = [
        KnownFact(memory_id=str(k["id"]), text=str(k["text"]), slot=k.get("slot"))
        for k in entry.get("known", [])
    ]
    return ExtractionCase(
        id=str(entry["id"]),
        tags=tuple(entry.get("tags", [])),
        request=ExtractionRequest(transcript, occurred_at, known),
        expected=tuple(_parse_expected(e) for e in entry.get("expected") or []),
        forbidden=tuple(str(w) for w in entry.get("forbidden", [])),
    )


def _parse_expected(entry: Mapping[str, Any]) -> ExpectedFact:
    relation = entry.get("relation")
    sources = entry.get("sources")
    return ExpectedFact(
        slot=entry.get("slot"),
        keywords=tuple(str(k) for k in entry.get("keywords", [])),
        inferred=bool(entry.get("inferred", False)),
        relation=RelationKind(relation) if relation else None,
        condition=entry.get("condition"),
        sources=tuple(sources) if sources is not None else None,
    )
