"""The rule extractor over the whole labelled extraction set, against floor figures.

Floors are the measured figures minus a margin (see docs/benchmarks.md); safety is absolute.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.bench.extraction_eval import ExtractionScores, evaluate, parse_cases

LABELLED_SET = Path(__file__).parents[3] / "data" / "extraction_set.yaml"
CASES = parse_cases(yaml.safe_load(LABELLED_SET.read_text(encoding="utf-8")))


async def scores_for(tag: str | None = None) -> ExtractionScores:
    cases = [c for c in CASES if tag is None or tag in c.tags]
    return await evaluate(RuleExtractor(), cases)


def test_the_set_covers_every_case_kind_with_at_least_forty_transcripts() -> None:
    assert len(CASES) >= 40
    tags = {t for c in CASES for t in c.tags}
    required = {"agent_intro", "system", "hedge", "condition", "update", "extends", "derives"}
    required |= {"date", "names", "multi", "negation", "chitchat", "safety", "heldout"}
    assert required <= tags
    assert len({c.id for c in CASES}) == len(CASES)


async def test_the_whole_set_meets_its_floors() -> None:
    scores = await scores_for()
    assert scores.precision.value >= 0.95
    assert scores.recall.value >= 0.95
    assert scores.inference_accuracy.value == 1.0
    assert scores.relation_accuracy.value >= 0.95
    assert scores.update_precision.value >= 0.95
    assert scores.update_recall.value >= 0.93


async def test_the_held_out_cases_meet_their_lower_floors() -> None:
    scores = await scores_for("heldout")
    assert scores.precision.value >= 0.9
    assert scores.recall.value >= 0.9


@pytest.mark.parametrize("tag", [None, "safety"])
async def test_safety_is_absolute(tag: str | None) -> None:
    scores = await scores_for(tag)
    assert scores.safety_violations == 0
    assert scores.condition_preservation.value == 1.0
    assert scores.spurious_conditions == 0
