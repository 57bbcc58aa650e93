"""The lab's out-of-writer reading of the change reader as a veto (ADR 0149): each writer read
by a reader trained on the others, and the false yeses listed surest first. No encoder is
loaded: the readings are small arrays written for this test."""

from __future__ import annotations

import numpy as np

from factledger.bench.evalsets.cases import Answer
from factledger.bench.judgement.change_reader import Read, fit
from factledger.bench.judgement.change_veto import false_yes_readings, out_of_writer_p


def pair(reply: str, label: str) -> Answer:
    return Answer("a1", "telecom", "phone", "0182", "Does your number end in 0182?", reply, label)


def test_a_writer_is_read_by_a_reader_that_never_saw_its_rows() -> None:
    x = np.array([[1.0], [-1.0], [1.0], [-1.0], [5.0]], dtype=np.float32)
    r = Read(np.zeros((5, 3), dtype=np.float32), np.ones(5, dtype=bool), x)
    labels = ["yes", "no", "yes", "no", "no"]
    # writer c's one non-yes lies far on the yes side: only a reader that never saw it is sure
    p = out_of_writer_p(r, labels, ["a", "a", "b", "b", "c"], np.ones(5, dtype=bool))
    seen = fit(x, labels)
    assert p[4] > 0.9 > seen.probabilities(x[4:])[0, seen.column("yes")]


def test_false_yeses_are_listed_surest_first_beside_the_true_yeses_above_them() -> None:
    pairs = [
        pair("yes", "yes"),
        pair("yes that's my email", "neither"),
        pair("yep", "yes"),
        pair("creo que sí", "neither"),
    ]
    said = np.array([True, True, True, True])
    y = np.array([True, False, True, False])
    p = np.array([0.99, 0.9, 0.8, 0.95], dtype=np.float32)
    out = false_yes_readings(said, y, p, pairs, ["e", "e", "i", "i"])
    assert [f["reply"] for f in out["false_yes"]] == ["creo que sí", "yes that's my email"]
    assert out["true_yes_above_surest_false_yes"] == 0.5
