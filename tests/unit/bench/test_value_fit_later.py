"""ADR 0242's later bars in the lab: they are chosen on the answers of a case's later sessions
to the fields none of its earlier answers read over its bar, the ones the product would ask
the head about there. Marks made up for the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.adapters.judgement.value_fit import ValueAnswer
from factledger.bench.judgement.value_fit import Marked
from factledger.bench.judgement.value_fit_later import later_unheld, main


def _marked(case: str, session: int, name: str, over: float) -> Marked:
    return Marked(case, ValueAnswer(name, "words", over, False, ()), False, (), session)


def test_a_later_sessions_unheld_answers_are_those_no_earlier_answer_read_over_its_bar() -> None:
    marked = [
        _marked("a", 0, "budget", 1.0),  # over its bar: held from session 1
        _marked("a", 0, "supplier", -1.0),  # under it: not held
        _marked("a", 1, "budget", 2.0),
        _marked("a", 1, "supplier", 0.5),  # unheld here, held from session 2
        _marked("a", 1, "team_size", -0.5),
        _marked("a", 2, "supplier", -0.5),
        _marked("a", 2, "team_size", 0.3),
        _marked("b", 1, "budget", -2.0),  # another case: its own earlier answers
    ]

    later = later_unheld(marked)

    assert [(m.case_id, m.session, m.answer.field) for m in later] == [
        ("a", 1, "supplier"),
        ("a", 1, "team_size"),
        ("a", 2, "team_size"),
        ("b", 1, "budget"),
    ]
    assert all(m.answer.later for m in later)
    assert not any(m.answer.later for m in marked)


def test_a_held_out_half_stops_the_fit_before_anything_loads(tmp_path: Path) -> None:
    held_out = tmp_path / "blind9" / "heldout"
    held_out.mkdir(parents=True)
    argv = ["--head", str(tmp_path / "missing.npz"), "--fit-dev", str(held_out)]

    with pytest.raises(SystemExit, match="never read"):
        main([*argv, "--out", str(tmp_path / "out.npz")])
