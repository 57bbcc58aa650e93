"""The learned reader of tentative sentences (the ledger's hedge rule) against the labelled
set of fresh sentences (tests/data/hedge_set.yaml) and sentences of its own.

The figures the shipped heads reach are held here, so a change of the heads that loses them is
seen: at the judge's own bar, 7 of the development half's 10 tentative sentences and 4 of the
held-out half's 5, and no plain sentence of either (the word lists it replaced caught all 15
and flagged up to 2 plain ones, on a set written beside them). A plain sentence read as
tentative refuses a true proposal, so the bar is not lowered to catch more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tentative import LearnedTentativeReader

CASES = yaml.safe_load((Path(__file__).parents[3] / "data" / "hedge_set.yaml").read_text())["cases"]


@pytest.fixture(scope="module")
def reader() -> LearnedTentativeReader:
    return LearnedTentativeReader(LearnedJudge.packaged())


@pytest.mark.parametrize(
    ("split", "max_missed", "max_false_alarms"), [("dev", 3, 0), ("held_out", 1, 0)]
)
def test_tentative_sentences_are_caught_and_few_plain_ones_are_flagged(
    reader: LearnedTentativeReader, split: str, max_missed: int, max_false_alarms: int
) -> None:
    cases = [c for c in CASES if c["split"] == split]
    missed = [c["text"] for c in cases if c["tentative"] and not reader(c["text"])]
    flagged = [c["text"] for c in cases if not c["tentative"] and reader(c["text"])]
    assert len(missed) <= max_missed, missed
    assert len(flagged) <= max_false_alarms, flagged
    assert len(cases) >= 10


def test_hedges_in_other_words_than_a_list_would_hold(reader: LearnedTentativeReader) -> None:
    assert reader("We'd likely go with the bigger van, budget permitting.")
    assert reader("I guess we might end up moving to Bristol.")
    assert reader("Provided the audit passes, we sign in June.")
    assert not reader("We moved our warehouse to Bristol in March.")
    assert not reader("The invoice goes to our finance team in Leeds.")


def test_a_sentence_met_again_is_answered_alike(reader: LearnedTentativeReader) -> None:
    said = "Possibly we hire two more drivers in spring."
    assert reader(said) is reader(said) is True
    assert 0.0 <= reader.probability(said) <= 1.0


def test_an_embedder_without_a_synchronous_call_is_refused() -> None:
    judge = LearnedJudge.packaged()
    other = object.__new__(LearnedJudge)
    object.__setattr__(other, "embedder", HashingEmbedder(dimension=8))
    object.__setattr__(other, "heads", judge.heads)
    with pytest.raises(TypeError):
        LearnedTentativeReader(other)
