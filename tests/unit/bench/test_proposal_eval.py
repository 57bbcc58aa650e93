"""The proposer's labelled set: its shape, and floors at the tuned figures."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.bench.proposal_eval import ProposalScores, evaluate, parse_cases

LABELLED = Path(__file__).parents[2] / "data" / "proposal_set.yaml"


def cases():  # type: ignore[no-untyped-def]
    return parse_cases(yaml.safe_load(LABELLED.read_text(encoding="utf-8")))


def test_the_set_has_sixty_cases_and_keeps_a_third_aside() -> None:
    labelled = cases()
    held = [c for c in labelled if "heldout" in c.tags]
    assert len(labelled) >= 60
    assert abs(3 * len(held) - len(labelled)) <= 3  # a third, give or take a case
    assert len({c.id for c in labelled}) == len(labelled)


async def test_the_rule_proposer_keeps_its_tuned_figures() -> None:
    scores = await evaluate(RuleExtractor(), cases())
    held = ProposalScores(tuple(r for r in scores.results if "heldout" in r.case.tags))
    # First run (105 cases, 64 multi-session, 34 held out; no tuning): precision 1.00, recall
    # 0.68, held-out 0.75, multi-session 0.66, second batch 0.47. Tuned on the 71 cases not
    # held out (docs/benchmarks.md): precision 0.99, recall 0.97, held-out 0.89, multi-session
    # 0.98, second batch 0.97. Floors are the tuned figures, so any regression fails.
    # Safety-like properties are exact, not floors.
    multi = ProposalScores(tuple(r for r in scores.results if len(r.case.sessions) > 1))
    assert len(multi.results) >= 60
    assert round(scores.precision, 2) >= 0.99
    assert round(scores.recall, 2) >= 0.97
    assert round(held.recall, 2) >= 0.89
    assert round(held.precision, 2) >= 1.0
    assert round(multi.recall, 2) >= 0.98
    new = ProposalScores(tuple(r for r in scores.results if "batch2" in r.case.tags))
    assert round(new.recall, 2) >= 0.97  # the 42 cases of the second batch
    assert scores.origin_accuracy == 1.0
    assert scores.condition_preservation == 1.0
    assert scores.wrong_field_rate == 0.0
    assert scores.duplicates == 0


async def test_a_proposer_that_misses_everything_scores_zero_recall() -> None:
    class Silent:
        async def extract(self, request: object) -> list[object]:
            return []

    scores = await evaluate(Silent(), cases()[:5])  # type: ignore[arg-type]
    assert scores.recall == 0.0
    assert scores.precision == 1.0  # nothing proposed, nothing wrong
