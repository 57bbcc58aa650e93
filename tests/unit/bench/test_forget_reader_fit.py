"""The forget reader's fit (ADR 0165): the gate keeps the kept-out requests the rule asks for,
the reader's threshold is F1-best among what the gate passes, and sentences are kept out by
their text alone."""

from __future__ import annotations

import numpy as np

from factledger.adapters.judgement.forget_reader import QUESTION
from factledger.bench.judgement.corpus import Sentence
from factledger.bench.judgement.forget_reader import (
    GATE_RECALL,
    GATES,
    gate_for,
    kept_out,
    pairs_of,
    reader_threshold,
)


def test_the_gate_is_the_highest_that_keeps_the_requests_the_rule_asks_for() -> None:
    asked = np.array([True] * 50 + [False] * 50)
    flag = np.concatenate([np.linspace(0.12, 0.95, 50), np.linspace(0.0, 0.6, 50)])
    gate = gate_for(flag, asked)
    assert gate in GATES
    assert (flag[asked] >= gate).mean() >= GATE_RECALL
    higher = [g for g in GATES if g > gate]
    assert all((flag[asked] >= g).mean() < GATE_RECALL for g in higher)


def test_no_gate_keeping_enough_requests_gives_the_lowest() -> None:
    asked = np.array([True, True, False])
    assert gate_for(np.array([0.0, 0.01, 0.9]), asked) == GATES[-1]


def test_the_readers_threshold_is_the_f1_best_reading_itself() -> None:
    p = np.array([0.95, 0.9, 0.8, 0.7, 0.2, 0.1])
    asked = np.array([True, True, False, True, False, False])
    threshold, figures = reader_threshold(p, asked)
    assert threshold == 0.7
    assert figures == {"precision": 0.75, "recall": 1.0}


def test_a_sentence_is_kept_out_by_its_text_whatever_its_label() -> None:
    said = "Please delete my address."
    assert kept_out(Sentence(said, "self", False, True, False)) == kept_out(
        Sentence(said, "question", True, False, False)
    )
    pairs = pairs_of(
        [Sentence(said, "self", False, True, False), Sentence("Hi.", "self", False, False, False)]
    )
    assert [(p.question, p.label) for p in pairs] == [(QUESTION, "yes"), (QUESTION, "neither")]
