"""The hedge lexicon against a labelled set of fresh sentences (tests/data/hedge_set.yaml).

No tentative sentence may pass unnoticed (a dropped hedge is what the rule exists to stop);
the few plain sentences it flags cost a proposer a condition, and are bounded here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.domain.hedges import markers_in

CASES = yaml.safe_load((Path(__file__).parents[2] / "data" / "hedge_set.yaml").read_text())["cases"]


@pytest.mark.parametrize(("split", "max_false_alarms"), [("dev", 2), ("held_out", 0)])
def test_every_tentative_sentence_is_caught_and_few_plain_ones_are_flagged(
    split: str, max_false_alarms: int
) -> None:
    cases = [c for c in CASES if c["split"] == split]
    missed = [c["text"] for c in cases if c["tentative"] and not markers_in(c["text"]).any]
    flagged = [c["text"] for c in cases if not c["tentative"] and markers_in(c["text"]).any]
    assert missed == []
    assert len(flagged) <= max_false_alarms
    assert len(cases) >= 10
