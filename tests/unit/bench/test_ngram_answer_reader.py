"""The lab's character n-gram answer reader and its two bars (ADR 0140): features, a fit on a
few pairs written for this test, the bars fitted together, and the file's round trip. No
encoder is loaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.ngram_candidate import Bars, fit_bars, reads_yes
from factledger.bench.judgement.ngram_reader import (
    FIRST_WORD_BUCKETS,
    QUESTION_BUCKETS,
    REPLY_BUCKETS,
    NgramReader,
    pair_features,
    pair_row,
)
from factledger.bench.judgement.ngram_writers import writers

DENSE = REPLY_BUCKETS + FIRST_WORD_BUCKETS + QUESTION_BUCKETS
NEW_DIGITS = DENSE + 7  # after the six length bins and the share of shared words


def test_a_reply_naming_a_number_the_question_does_not_hold_is_marked_as_such() -> None:
    asked = "Your budget is 450 a month, right?"
    assert pair_row(asked, "yes but make it 750")[NEW_DIGITS] == 1.0
    assert pair_row(asked, "yes, 450")[NEW_DIGITS] == 0.0
    # The first word's n-grams are read apart only when the reply carries a digit run or a
    # word of three letters or more that the question does not hold (the first word counts
    # too, as measured: ADR 0140 names that as a flaw).
    first = slice(REPLY_BUCKETS, REPLY_BUCKETS + FIRST_WORD_BUCKETS)
    assert pair_row(asked, "right")[first].sum() == 0.0
    assert pair_row(asked, "ok")[first].sum() == 0.0
    assert pair_row(asked, "yes")[first].sum() > 0.0
    assert pair_row(asked, "yes but make it 750")[first].sum() > 0.0
    assert pair_features([]).shape == (0, pair_row(asked, "👍").shape[0])


def test_a_reader_fitted_on_a_few_pairs_reads_their_kind(tmp_path: Path) -> None:
    asked = "Your delivery day is Friday now?"
    pairs = [
        *(LabelledPair(asked, r, "yes") for r in ("yes", "yep", "ja", "sí", "yes friday")),
        *(LabelledPair(asked, r, "no") for r in ("no", "nope", "nein", "no, monday")),
        *(LabelledPair(asked, r, "neither") for r in ("maybe", "who is this?", "hmm")),
    ]
    reader = NgramReader.fit(pairs)
    p = reader.probabilities([(asked, "yes"), (asked, "nope")])
    assert p[0, 0] > p[0, 1]
    assert p[1, 1] > p[1, 0]
    reader.save(tmp_path / "r.npz", tuned_a=0.65, ngram_a=0.86)
    again, bars = NgramReader.load(tmp_path / "r.npz")
    assert bars == pytest.approx({"tuned_a": 0.65, "ngram_a": 0.86})
    assert np.allclose(again.probabilities([(asked, "yes")]), p[:1])


def test_the_bars_let_no_non_yes_through_and_keep_the_most_yeses() -> None:
    labels = ["no", "yes", "yes", "neither"]
    # The no is a sure yes to the tuned reader but not to the n-gram reader; the neither the
    # other way round: only the two readers together can refuse both.
    tuned = np.array([[0.95, 0, 0.05], [0.9, 0, 0.1], [0.7, 0, 0.3], [0.6, 0, 0.4]], np.float32)
    ngram = np.array([[0.55, 0.4, 0.05], [0.8, 0, 0.2], [0.9, 0, 0.1], [0.97, 0, 0.03]], np.float32)
    bars = fit_bars(tuned, ngram, labels, np.ones(4, dtype=bool))
    assert bars == Bars(0.7, 0.8, 1.0)  # ties: the higher bars
    said = reads_yes(tuned, bars.tuned) & reads_yes(ngram, bars.ngram)
    assert said.tolist() == [False, True, True, False]
    # Read by the tuned reader alone (the n-gram reader sure of every reply), the no read as
    # surely as any yes leaves no bar that keeps a yes.
    sure = np.tile(np.array([[1.0, 0.0, 0.0]], np.float32), (4, 1))
    assert fit_bars(tuned, sure, labels, np.ones(4, dtype=bool)) == Bars(1.0, 1.0, 0.0)


def test_the_writers_are_read_from_the_reply_files_names(tmp_path: Path) -> None:
    for name in ("replies-c-01.yaml", "replies-c-02.yaml", "replies-i-01.yaml", "answers.yaml"):
        (tmp_path / name).write_text("[]\n", encoding="utf-8")
    assert writers([tmp_path]) == ["c", "i"]
