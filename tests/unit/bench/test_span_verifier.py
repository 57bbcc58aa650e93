"""The span verifier probe's pure parts: what the reader reads (the product's pair), the
halves, the bars, and the comparison (torch's training and reading are the lab's, not run
here). Marks made up."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.adapters.judgement.span_verifier import verifier_pair
from factledger.adapters.judgement.value_fit import ValueAnswer
from factledger.bench.judgement.span_verifier import BARS, at_bars, compare, half_of, span_pair
from factledger.bench.judgement.value_fit import Marked, fold_of, said_around


def _answer(span: str, line: str, agent: str = "", field: str = "home_address") -> Marked:
    answer = ValueAnswer(field, span, 1.0, False, (), line=line, agent=agent)
    return Marked("c-1", answer, True, (0,))


def test_the_reader_reads_each_answer_in_its_own_line_as_the_product_does() -> None:
    answer = _answer("14 Elm Street", "We moved to 14 Elm Street in May", "Where do you live?")

    assert span_pair(answer) == verifier_pair(
        "home_address", "14 Elm Street", "We moved to 14 Elm Street in May", "Where do you live?"
    )
    assert span_pair(answer)[1] == "We moved to [14 Elm Street] in May"


def test_the_line_around_an_answer_is_the_agents_only_when_the_agent_said_it() -> None:
    lines = (("agent", "Your address?"), ("subject", "Elm Street"), ("subject", "number 14"))

    assert said_around(lines, 1) == ("Elm Street", "Your address?")
    assert said_around(lines, 2) == ("number 14", "")
    assert said_around(lines, 0) == ("Your address?", "")


def test_halves_split_a_fold_by_case_and_are_the_same_every_run() -> None:
    halves = [half_of(f"case-{n}") for n in range(200)]

    assert set(halves) == {0, 1}
    assert 60 < sum(halves) < 140
    assert halves == [half_of(f"case-{n}") for n in range(200)]


def _marks(n: int) -> list[Marked]:
    """`n` answers, the first half right; half of each over the reader's bar."""
    return [
        Marked(
            f"case-{i}",
            ValueAnswer("plan", "Pro", 1.0 if i % 2 == 0 else -1.0, False, ()),
            i < n // 2,
            (i,) if i < n // 2 else (),
        )
        for i in range(n)
    ]


def test_at_the_bars_a_reading_that_knows_the_right_answers_keeps_only_them() -> None:
    marked = _marks(8)
    sure = np.array([0.95] * 4 + [0.05] * 4)

    rows = at_bars(marked, sure, np.ones(8, dtype=bool), labelled=4)

    assert rows["the reader's bars"] == (0.5, 2)
    assert all(rows[f"{bar:.1f}"] == (1.0, 4) for bar in BARS)


def test_the_comparison_reads_fold_zero_and_fits_each_regression_on_the_other_half() -> None:
    rng = np.random.default_rng(3)
    marked = _marks(4000)
    right = np.array([m.right for m in marked])
    # The five numbers half tell right from wrong; the reader's yes tells them apart.
    five = np.c_[right + rng.normal(scale=1.5, size=4000), rng.normal(size=(4000, 4))]
    yes = np.where(right, 0.9, 0.1)
    known = np.ones(4000, dtype=bool)

    rows = compare(marked, 2000, five, known, np.full(4000, 0.5), yes)

    zero = sum(fold_of(m.case_id) == 0 for m in marked)
    other = sum(fold_of(m.case_id) == 0 and half_of(m.case_id) == 1 for m in marked)
    assert rows["the reader alone"]["0.7"][1] == sum(
        m.right for m in marked if fold_of(m.case_id) == 0
    )
    assert 0 < other < zero
    five_alone = rows["other half: the five"]["0.7"][0]
    assert rows["other half: the five and the reader"]["0.7"][0] == pytest.approx(1.0)
    assert five_alone < 0.99
