"""A later session's reading in the lab: ADR 0242's bars are chosen on the answers of a case's
later sessions to the fields none of its earlier answers read over its bar, the ones the
product would ask the head about there; ADR 0243's is the packaged head's, taken only over the
same five numbers. Marks and banks made up for the test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.judgement.value_fit import Bank, LaterReading, ValueAnswer, ValueFitHead
from factledger.bench.judgement import value_fit_later
from factledger.bench.judgement.value_fit import Marked, PackagedReading
from factledger.bench.judgement.value_fit_later import as_packaged, later_bars, later_unheld, main


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


@dataclass
class NamedEmbedder:
    model_id: str = "axes-2"
    dimension: int = 2

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


@dataclass
class UnreadVerifier:
    """A verifier copying a reading never asks."""

    path: Path = Path("unread.onnx")
    sha256: str = "0" * 64

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        raise AssertionError("the verifier was read")


def _head(bank: Bank, weights: list[float], model_id: str = "axes-2") -> ValueFitHead:
    w = np.array(weights, dtype=np.float32)
    return ValueFitHead(NamedEmbedder(model_id), bank, w, -1.0, 0.7, 0.7, 3.0)


def test_a_later_reading_as_packaged_is_the_packaged_heads_over_the_same_numbers() -> None:
    bank = Bank.of({"plan": np.eye(2, dtype=np.float32)})
    packaged = _head(bank, [0.2, 1.1, 4.4, 0.4, 0.6])
    head = replace(_head(bank, [0.1, -1.0, 4.8, 0.7, 0.5, 0.6]), keep_min=0.6, admit_min=0.65)

    reading = as_packaged(head, packaged)

    assert (reading.keep_min, reading.admit_min, reading.bias) == (0.7, 0.7, -1.0)
    assert reading.weights is not None
    assert reading.weights.tolist() == packaged.weights.tolist()
    other_bank = Bank.of({"plan": np.ones((2, 2), dtype=np.float32)})
    with pytest.raises(SystemExit, match="bank or encoder"):
        as_packaged(replace(head, bank=other_bank), packaged)
    with pytest.raises(SystemExit, match="bank or encoder"):
        as_packaged(_head(bank, [0.0] * 5, model_id="another"), packaged)
    with pytest.raises(SystemExit, match="reach"):
        as_packaged(replace(head, reach=2.0), packaged)


def test_a_packaged_head_with_a_later_reading_of_its_own_gives_that_one() -> None:
    bank = Bank.of({"plan": np.eye(2, dtype=np.float32)})
    five = LaterReading(0.7, 0.7, np.array([0.2, 1.1, 4.4, 0.4, 0.6], dtype=np.float32), -0.3)
    # ADR 0245's file: the verifier's head on first sessions, the five weights on later ones.
    packaged = replace(
        _head(bank, [0.1, -1.0, 4.8, 0.7, 0.5, 0.6]),
        keep_min=0.6,
        admit_min=0.65,
        verifier=UnreadVerifier(),
        later_reading=five,
    )
    head = replace(packaged, later_reading=None)

    assert as_packaged(head, packaged) is five
    with pytest.raises(SystemExit, match="with its verifier"):
        as_packaged(head, replace(packaged, later_reading=LaterReading(0.5, 0.5)))


def test_bars_are_chosen_on_dev_halves_or_read_as_packaged_never_both(tmp_path: Path) -> None:
    argv = ["--head", str(tmp_path / "missing.npz"), "--out", str(tmp_path / "out.npz")]

    with pytest.raises(SystemExit) as neither:
        main(argv)
    with pytest.raises(SystemExit) as both:
        main([*argv, "--as-packaged", "--fit-dev", str(tmp_path / "blind9" / "dev")])

    assert neither.value.code == both.value.code == 2  # the parser's refusal, before any load


def test_later_bars_keep_the_most_right_answers_at_the_packaged_heads_precision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bank = Bank.of({"plan": np.eye(2, dtype=np.float32)})
    # The head reads only how far over its bar an answer is: 0.88, 0.82, 0.62, 0.55, 0.38, 0.12.
    head = _head(bank, [1.0, 0.0, 0.0, 0.0, 0.0])
    head = replace(head, bias=0.0)
    overs_right = [(2.0, True), (1.5, True), (0.5, False), (0.2, True), (-0.5, True), (-2.0, False)]
    later = [
        Marked(
            f"c{n}", ValueAnswer("plan", "Pro", over, False, ()), right, (n,) if right else (), 1
        )
        for n, (over, right) in enumerate(overs_right)
    ]
    # The packaged head keeps every answer over its bar and none under it: 3 right of 4.
    shipped = [over >= 0 for over, _ in overs_right]
    reading = PackagedReading(head, np.ones(6, bool), np.zeros((6, 5)), np.zeros(6), shipped)
    monkeypatch.setattr(value_fit_later, "packaged_reading", lambda marked, embedder: reading)

    (keep, admit), report = later_bars(head, later, 4, NamedEmbedder(), lift=0.0)

    chosen = report["chosen"]
    assert isinstance(chosen, dict)
    assert (chosen["made"], chosen["right"]) == (4, 3)  # no pair keeps more right at 0.75
    assert keep <= 0.55  # every answer over its bar
    assert admit > 0.38  # none under it: the admit grid starts at 0.5
    assert report["the packaged head"] == {
        "made": 4,
        "right": 3,
        "precision": 0.75,
        "labelled found": 3,
        "recall": 0.75,
    }
    first = report["the first sessions' bars"]
    assert isinstance(first, dict)
    assert (first["made"], first["right"]) == (2, 2)  # the head's own 0.7: 0.88 and 0.82


def test_first_bars_are_refused_unless_admit_is_at_least_keep(tmp_path: Path) -> None:
    argv = ["--head", str(tmp_path / "missing.npz"), "--out", str(tmp_path / "out.npz")]

    with pytest.raises(SystemExit) as admit_under_keep:
        main([*argv, "--as-packaged", "--first-bars", "0.7", "0.6"])
    with pytest.raises(SystemExit) as over_one:
        main([*argv, "--as-packaged", "--first-bars", "0.7", "1.2"])

    assert admit_under_keep.value.code == over_one.value.code == 2  # before any load
