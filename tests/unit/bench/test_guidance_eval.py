"""Each guidance's own labelled set: its shape, and floors at the measured figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.bench.guidance_eval import (
    GuidanceScores,
    evaluate_set,
    guidance_set,
    load_guidance_set,
)

SETS = Path(__file__).parents[2] / "data" / "extraction_sets"
# Measured after one round of tuning on the dev cases only (docs/benchmarks.md has the first
# run too): dev precision, dev recall, held-out precision, held-out recall. Floors are these
# figures, so any regression fails; safety is exact.
FLOORS = {
    "sales_discovery": (1.00, 1.00, 1.00, 0.30),
    "support_ticket": (0.94, 0.94, 1.00, 0.63),
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_each_set_has_twenty_five_cases_and_keeps_a_third_aside(name: str) -> None:
    labelled = load_guidance_set(SETS / f"{name}.yaml")
    held = [c for c in labelled.cases if "heldout" in c.tags]
    assert len(labelled.cases) >= 25
    assert abs(3 * len(held) - len(labelled.cases)) <= 3
    assert len({c.id for c in labelled.cases}) == len(labelled.cases)
    assert labelled.slotted_only
    assert {c.request.context.conversation_type for c in labelled.cases} == {name}


@pytest.mark.parametrize("name", sorted(FLOORS))
async def test_the_rule_extractor_keeps_each_guidances_figures(name: str) -> None:
    scores = await evaluate_set(RuleExtractor(), load_guidance_set(SETS / f"{name}.yaml"))
    dev_p, dev_r, held_p, held_r = FLOORS[name]
    assert round(scores.dev.precision.value, 2) >= dev_p
    assert round(scores.dev.recall.value, 2) >= dev_r
    assert round(scores.held_out.precision.value, 2) >= held_p
    assert round(scores.held_out.recall.value, 2) >= held_r
    assert scores.dev.safety_violations == 0
    assert scores.held_out.safety_violations == 0
    assert name in scores.line()


async def test_the_default_guidance_finds_none_of_the_new_slots() -> None:
    # The same cases without their conversation type: the guidance, not the text, made them.
    for name in FLOORS:
        labelled = load_guidance_set(SETS / f"{name}.yaml", name="default")
        scores = await evaluate_set(RuleExtractor(), labelled)
        assert scores.dev.recall.value < 0.5


async def test_an_extractor_that_finds_nothing_scores_zero_recall() -> None:
    class Silent:
        async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
            return []

    scores = await evaluate_set(Silent(), load_guidance_set(SETS / "support_ticket.yaml"))
    assert isinstance(scores, GuidanceScores)
    assert scores.dev.recall.value == 0.0
    assert scores.held_out.recall.value == 0.0


async def test_a_slotted_set_ignores_notes_without_a_slot() -> None:
    case = {"id": "c", "transcript": [{"subject": "We went hiking in the hills."}], "expected": []}
    note_taker = RuleExtractor()
    plain = await evaluate_set(note_taker, guidance_set("default", [case]))
    slotted = await evaluate_set(
        note_taker, guidance_set("default", {"score": "slotted", "cases": [case]})
    )
    assert plain.dev.precision.value < 1.0  # the note counts as an extra fact
    assert slotted.dev.precision.value == 1.0
