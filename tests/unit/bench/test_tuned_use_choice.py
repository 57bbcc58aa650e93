"""What the tuned encoder's trainer adds and chooses, without torch: two-part questions made
from yes replies that name what they agree to, and the epoch and threshold of the runs' mean
reading. The pairs were written for this test."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.adapters.judgement.tuned_answers_file import TunedMember
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.usem.compound import compound_pairs
from factledger.bench.judgement.usem.ensemble import Epoch, choose

HEAD = np.zeros((4 * 512, 3), dtype=np.float32)


def _pairs() -> list[LabelledPair]:
    filler = [
        LabelledPair(f"Is your locker number {n} correct?", "correct", "yes", "en")
        for n in range(120)
    ]
    return [
        LabelledPair("Still based in Leeds?", "Leeds, yep", "yes", "en"),
        LabelledPair("Is your plan still Basic?", "no", "no", "en"),
        LabelledPair("Vous êtes à Lyon ?", "oui, Lyon", "yes", "fr"),
        LabelledPair("Votre banque est la Poste ?", "non", "no", "fr"),
        *filler,
    ]


def test_a_yes_naming_its_part_is_made_neither_under_a_two_part_question() -> None:
    made = compound_pairs(_pairs(), share=1.0, seed=1)
    by_reply = {p.reply: p for p in made}
    leeds = by_reply["Leeds, yep"]
    assert leeds.label == "neither"
    assert "Still based in Leeds?" in leeds.question
    assert leeds.question != "Still based in Leeds?"
    lyon = by_reply["oui, Lyon"]
    assert "Votre banque est la Poste ?" in lyon.question  # the other part: same language
    # "correct" is in most questions: repeating it names no part; noes are never made.
    assert {p.reply for p in made} == {"Leeds, yep", "oui, Lyon"}
    assert compound_pairs(_pairs(), share=0.0, seed=1) == []


def _epoch(p: list[list[float]]) -> Epoch:
    return Epoch(TunedMember({}, HEAD, np.zeros(3, dtype=np.float32)), np.array(p), {})


def test_the_epoch_whose_mean_reading_accepts_most_yeses_is_chosen() -> None:
    held = [
        LabelledPair("q1", "yes", "yes"),
        LabelledPair("q2", "sure", "yes"),
        LabelledPair("q3", "ok", "neither"),
    ]
    # Epoch 1: the neither reads as surer a yes than either yes in one run; epoch 2: the
    # runs disagree on the neither, and their mean puts it below both yeses.
    run_a = [
        _epoch([[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.95, 0, 0.05]]),
        _epoch([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.9, 0, 0.1]]),
    ]
    run_b = [
        _epoch([[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.95, 0, 0.05]]),
        _epoch([[0.95, 0, 0.05], [0.95, 0, 0.05], [0.4, 0, 0.6]]),
    ]
    tuned, chosen = choose([run_a, run_b], held)
    assert chosen["epoch"] == 2
    assert len(tuned.members) == 2
    assert tuned.yes_min == pytest.approx(0.65, abs=0.002)  # above the mean neither (0.65)
