"""The phrasing set (issue 14, part 3): its shape, the scorer's checks, and floors at the
tuned figures."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.errors import MemoryBackendError
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.bench.phrasing_eval import (
    PhrasingScores,
    evaluate,
    note_problems,
    parse_cases,
    score_case,
)

LABELLED = Path(__file__).parents[2] / "data" / "phrasing_set.yaml"
CLASSES = {"tense", "contraction", "indirect", "smalltalk", "memory", "fragment", "note", "reason"}


def cases():  # type: ignore[no-untyped-def]
    return parse_cases(yaml.safe_load(LABELLED.read_text(encoding="utf-8")))


def test_the_set_covers_every_class_and_keeps_a_third_aside() -> None:
    labelled = cases()
    assert len(labelled) >= 80
    assert len({c.id for c in labelled}) == len(labelled)
    held = [c for c in labelled if "heldout" in c.tags]
    assert 0.28 <= len(held) / len(labelled) <= 0.36  # about a third
    assert {t for c in labelled for t in c.tags} >= CLASSES
    assert {t for c in held for t in c.tags} >= CLASSES


def test_a_note_is_judged_on_its_own() -> None:
    said = ["Honestly, we basically buy all our bread from the bakery on the corner these days."]
    assert note_problems("buys bread from the bakery on the corner", said) == []
    assert "first person or 'the subject'" in note_problems("buys our bread", said)
    assert "filler word" in note_problems("basically buys bread", said)
    copied = "basically buy all their bread from the bakery on the corner these days"
    assert "the subject's sentence, pronouns swapped" in note_problems(copied, said)
    assert "too long" in note_problems(" ".join(["word"] * 17), said)


async def test_an_extractor_that_stores_every_sentence_fails_quiet_and_notes() -> None:
    class Verbatim:
        async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
            return [
                ExtractedFact(f"f{i}", m.text, None, (i,))
                for i, m in enumerate(request.transcript)
                if m.role.value == "subject"
            ]

    quiet = [c for c in cases() if c.quiet and not c.facts]
    scores = await evaluate(Verbatim(), quiet)  # type: ignore[arg-type]
    assert not any(r.passed for r in scores.results)
    assert all(r.quiet_kept == 0 for r in scores.results)


def test_a_reason_counts_only_when_it_extends_the_change() -> None:
    [case] = [c for c in cases() if c.id == "reason-answer-to-why"]
    change = ExtractedFact("f0", "switched to Granite Hosting", "supplier", (0,), value="x")
    loose = ExtractedFact(
        "f1",
        "switched to Granite Hosting, previously Cloudnest, because of the outages",
        None,
        (2,),
    )
    assert not score_case(case, [change, loose]).reason_linked


async def test_the_rule_extractor_keeps_its_tuned_figures() -> None:
    scores = await evaluate(RuleExtractor(), cases())
    dev, held = scores.part(heldout=False), scores.part(heldout=True)
    # First run (before any rule change for this set): 10 of 89 cases passed (7/62 dev, 3/27
    # held out). Tuned on the dev part only; floors are the final figures (docs/benchmarks.md).
    assert _passed(dev) >= 61
    assert _passed(held) >= 22
    assert _quiet(scores) == (31, 31)
    assert sum(r.wrong_slots for r in scores.results) <= 1


def _passed(scores: PhrasingScores) -> int:
    return sum(r.passed for r in scores.results)


def _quiet(scores: PhrasingScores) -> tuple[int, int]:
    kept = sum(r.quiet_kept for r in scores.results)
    return kept, sum(len(r.case.quiet) for r in scores.results)


async def test_an_extractor_that_fails_is_scored_not_fatal() -> None:
    class OutOfShape:
        async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
            raise MemoryBackendError("extractor: the answer does not match the facts schema")

    scores = await evaluate(OutOfShape(), cases()[:4])  # type: ignore[arg-type]
    assert all(r.failed and not r.passed for r in scores.results)
    assert "  extractor errors   4" in scores.lines("all")
