"""The lab's vetoes on the answer judge's yes and the bar they leave (ADR 0124), over readings
given by hand: no model is loaded. The questions were written for this test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.bench.judgement.bar import dev_pairs
from factledger.bench.judgement.vetoes import Signals, Vetoes, bar, question_parts, said_yes

LABELS = ["no", "neither", "yes", "yes"]


def _signals(*, tentative: float = 0.1, asks_back: float = 0.1) -> Signals:
    # Row 0: a non-yes read as a sure yes; row 1: a non-yes read as a fair one; rows 2-3: yeses.
    tuned = np.array(
        [[0.93, 0.04, 0.03], [0.7125, 0.1, 0.1875], [0.8, 0.1, 0.1], [0.6, 0.2, 0.2]],
        dtype=np.float32,
    )
    reply_head = np.tile(np.array([0.9, 0.05, 0.05], dtype=np.float32), (4, 1))
    return Signals(
        tuned=tuned,
        reply_head=reply_head,
        asks_back=np.array([0.1, asks_back, 0.1, 0.1], dtype=np.float32),
        tentative=np.array([tentative, 0.1, 0.1, 0.1], dtype=np.float32),
        parts_yes=np.ones(4, dtype=np.float32),
        parts_likeliest=np.ones(4, dtype=bool),
    )


def test_a_question_asking_two_things_is_read_in_parts_and_a_tag_is_no_part() -> None:
    assert question_parts("You're at Helix Systems now, and still based in Leeds?") == [
        "You're at Helix Systems now",
        "and still based in Leeds",
    ]
    assert question_parts("Your notice period is three months, correct?") == []
    assert question_parts("Budget is 40,000 a year?") == []


def test_the_bar_is_set_by_the_surest_non_yes_the_vetoes_let_through() -> None:
    none = Vetoes(reply_head_min=None, tentative=False, asks_back=False, parts=False)
    assert bar(_signals(tentative=0.8), LABELS, none) == pytest.approx(0.931)
    # The hedge head reads the surest non-yes as tentative: the next one sets the bar.
    assert bar(_signals(tentative=0.8), LABELS, Vetoes(reply_head_min=None)) == pytest.approx(0.713)


def test_the_bar_never_falls_under_the_floor() -> None:
    s = _signals(tentative=0.8, asks_back=0.9)
    assert bar(s, LABELS, Vetoes(reply_head_min=None)) == pytest.approx(0.5)


def test_a_veto_turns_a_yes_into_neither_and_a_reply_head_below_its_bar_too() -> None:
    s = _signals(tentative=0.8)
    assert said_yes(s, Vetoes(reply_head_min=None), 0.5).tolist() == [False, True, True, True]
    unsure = Signals(
        **{**{f: getattr(s, f) for f in Signals.__slots__}, "reply_head": s.reply_head * 0.5}
    )
    assert not said_yes(unsure, Vetoes(reply_head_min=0.6), 0.5).any()


def test_a_yes_to_one_part_of_a_two_part_question_is_vetoed() -> None:
    s = _signals()
    parts = Signals(
        **{
            **{f: getattr(s, f) for f in Signals.__slots__},
            "parts_likeliest": np.array([True] * 3 + [False]),
        }
    )
    assert said_yes(parts, Vetoes(reply_head_min=None), 0.5).tolist() == [True, True, True, False]


def test_a_held_out_half_is_never_read_by_the_bar_listing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="aggregates only"):
        dev_pairs(tmp_path / "blind9" / "heldout")
