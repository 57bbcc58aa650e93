"""The bar of a tuned answer file fitted on writers it never read, without any model: the
composition's bar, its figures per writer, and the file written again with that bar only. The
pairs and readings were written for this test."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.adapters.judgement.tuned_answers_file import TunedAnswers, TunedMember
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.writers_bar import Read, composed_bar, grouped, with_bar

# (writer, language, label, question, reply)
WRITTEN = (
    ("e", "en", "yes", "Still in Leeds?", "yep"),
    ("e", "fr", "yes", "Vous êtes à Lyon ?", "oui"),
    ("i", "en", "neither", "Is your phone 0161 496 0000?", "yes that's my email"),
    ("i", "es", "neither", "¿Sigue en Iberia Plus?", "creo que sí"),
    ("i", "en", "no", "Plan still Basic?", "no"),
)
PAIRS = [LabelledPair(q, r, label, lang) for _, lang, label, q, r in WRITTEN]
WRITERS = [w for w, *_ in WRITTEN]
TUNED = np.array(
    [
        [0.95, 0.03, 0.02],
        [0.80, 0.10, 0.10],
        [0.90, 0.05, 0.05],  # a yes about another field: the reply-only head refuses it
        [0.72, 0.10, 0.18],  # a hedge both readers take for a yes: it sets the bar
        [0.10, 0.85, 0.05],
    ],
    dtype=np.float32,
)
HEAD_YES = np.array([True, True, False, True, False])


def test_the_bar_is_set_by_the_surest_non_yes_both_readers_let_through() -> None:
    read = Read(TUNED, HEAD_YES)
    bar = composed_bar(read, [p.label for p in PAIRS])
    assert bar == pytest.approx(0.721)
    at = grouped(read, PAIRS, WRITERS, bar)
    assert at["pooled"] == {"pairs": 5.0, "yeses": 2.0, "yes_accepted": 1.0, "false_yes": 0.0}
    assert at["writer_i"]["false_yes"] == 0.0
    below = grouped(read, PAIRS, WRITERS, 0.6)
    assert below["writer_i"]["false_yes"] == 1.0
    assert below["not_en"]["false_yes"] == 1.0
    assert below["en"]["false_yes"] == 0.0


def test_with_no_non_yes_let_through_the_bar_is_the_floor() -> None:
    read = Read(TUNED, np.array([True, True, False, False, False]))
    assert composed_bar(read, [p.label for p in PAIRS]) == 0.5


def test_the_file_is_written_again_with_its_bar_and_the_same_members() -> None:
    rng = np.random.default_rng(3)
    member = TunedMember(
        {"d0": rng.normal(0, 0.01, (8, 8)).astype(np.float32)},
        rng.normal(0, 1, (32, 3)).astype(np.float32),
        np.zeros(3, dtype=np.float32),
    )
    data = TunedAnswers((member,), 0.821).to_bytes()
    again = TunedAnswers.from_bytes(with_bar(data, 0.969), "copy.npz")
    first = TunedAnswers.from_bytes(data, "first.npz")
    assert again.yes_min == pytest.approx(0.969)
    np.testing.assert_array_equal(again.members[0].deltas["d0"], first.members[0].deltas["d0"])
    np.testing.assert_array_equal(again.members[0].head_weights, first.members[0].head_weights)
