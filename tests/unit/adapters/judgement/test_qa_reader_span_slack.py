"""ADR 0227: a single-valued field's answer widened to the widest span holding the best pair
that scores within the slack of it, in its sentence.

The reader's scores are written by hand, token by token, relative to "no answer" (whose start
and end score 0): what is tested is the decoding, not the model.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from factledger.adapters.judgement.qa_reader.decode import answers

FLOOR = 5.0
FIRST = 1  # the line's first token, after the window's "no answer" position


def read(
    line: str,
    starts: dict[str, float],
    ends: dict[str, float],
    *,
    slack: float,
    many: bool = False,
) -> list[tuple[str, float]]:
    """The answers `answers` gives for `line` (their words and margins), the tokens' start
    and end scores by their words (unnamed tokens score -5)."""
    offsets = [m.span() for m in re.finditer(r"\w+|[^\w\s]", line)]
    words = [line[x:y] for x, y in offsets]
    start = np.array([0.0] + [starts.get(w, -5.0) for w in words], dtype=np.float32)
    end = np.array([0.0] + [ends.get(w, -5.0) for w in words], dtype=np.float32)
    found = answers(start, end, FIRST, offsets, line, margin=FLOOR, many=many, slack=slack)
    return [(line[a.start : a.end], round(a.margin, 3)) for a in found]


PHARMACY = "I've switched my prescriptions to Boots at Whiteladies Road as Lloyds closed."
# The usual near tie: the reader reads "Whiteladies" as a start a little more surely than
# "Boots", so the best pair drops the pharmacy's name.
PHARMACY_STARTS = {"Boots": 3.6, "Whiteladies": 4.0}
PHARMACY_ENDS = {"Road": 4.0, "closed": 1.0}


def test_without_slack_the_best_pair_is_the_answer() -> None:
    assert read(PHARMACY, PHARMACY_STARTS, PHARMACY_ENDS, slack=0.0) == [("Whiteladies Road", 8.0)]


def test_a_wider_span_within_the_slack_is_the_answer_at_the_best_pairs_margin() -> None:
    assert read(PHARMACY, PHARMACY_STARTS, PHARMACY_ENDS, slack=0.5) == [
        ("Boots at Whiteladies Road", 8.0)
    ]


def test_a_wider_span_scoring_further_under_than_the_slack_is_not_taken() -> None:
    starts = {"Boots": 3.2, "Whiteladies": 4.0}

    assert read(PHARMACY, starts, PHARMACY_ENDS, slack=0.5) == [("Whiteladies Road", 8.0)]


def test_of_the_spans_within_the_slack_the_widest_is_taken() -> None:
    starts = {"switched": 3.7, "Boots": 3.8, "Whiteladies": 4.0}

    assert read(PHARMACY, starts, PHARMACY_ENDS, slack=0.5) == [
        ("switched my prescriptions to Boots at Whiteladies Road", 8.0)
    ]


def test_the_widened_span_never_leaves_the_best_pairs_sentence() -> None:
    line = "We use Boots. Whiteladies Road branch."
    starts, ends = {"Boots": 4.0, "Whiteladies": 4.0}, {"Boots": 3.8, "branch": 4.0}

    # "Boots. Whiteladies Road branch" scores as well as the best pair, across a sentence.
    assert read(line, starts, ends, slack=0.5) == [("Whiteladies Road branch", 8.0)]


def test_an_answer_widened_into_a_better_ones_span_stays_as_its_best_pair() -> None:
    line = "Email at home, phone at work"
    starts, ends = {"Email": 4.0, "phone": 3.9}, {"home": 4.0, "work": 3.4}
    # "phone at work" (7.3) widened within the slack would be the whole line (7.4), which
    # holds the better answer "Email at home" (8.0): it keeps its own words.
    found = read(line, starts, ends, slack=0.5, many=True)

    assert found == [("Email at home", 8.0), ("phone at work", 7.3)]


@pytest.mark.parametrize("slack", [0.0, 0.5, 2.0])
def test_a_span_under_the_floor_is_no_answer_whatever_the_slack(slack: float) -> None:
    starts, ends = {"Boots": 2.0, "Whiteladies": 2.2}, {"Road": 2.0}

    assert read(PHARMACY, starts, ends, slack=slack) == []
