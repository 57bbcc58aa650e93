"""ADR 0211's fit in the lab: the bars are the pair keeping the most right answers at the
reader's bars' precision plus the lift, an answer under its bar never needing less than one
over it; the regression is fitted on the columns it is read on. Marks made up for the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.judgement.qa_reader.reader import FieldAnswer, LineRead
from factledger.adapters.judgement.value_fit import ValueAnswer
from factledger.bench.judgement.value_fit import (
    LIFT,
    Marked,
    choose,
    dev_answers,
    dev_values,
    fit_regression,
    frontier,
    main,
    merged,
    outcome,
    probabilities,
)


def _marked(over: float, right: bool, n: int) -> Marked:
    return Marked(
        f"case-{n}", ValueAnswer("plan", "Pro", over, False, ()), right, (n,) if right else ()
    )


def test_the_chosen_bars_keep_the_most_right_answers_at_the_lifted_precision() -> None:
    # Over the bar: 8 right (p 0.9) and 2 wrong the head doubts (p 0.2); under it: 3 right the
    # head is sure of (p 0.95) and 3 wrong it is not (p 0.4).
    marked = [_marked(1.0, True, n) for n in range(8)] + [
        _marked(1.0, False, 8 + n) for n in range(2)
    ]
    marked += [_marked(-1.0, True, 10 + n) for n in range(3)]
    marked += [_marked(-1.0, False, 13 + n) for n in range(3)]
    p = np.array([0.9] * 8 + [0.2] * 2 + [0.95] * 3 + [0.4] * 3)
    known = np.ones(len(marked), dtype=bool)

    keep, admit, base, chosen = choose(marked, p, known, labelled=11)

    assert base == outcome(marked, [m.answer.over_bar >= 0 for m in marked], 11)
    assert base["precision"] == 0.8
    assert (chosen["made"], chosen["right"]) == (11, 11)
    assert chosen["precision"] >= base["precision"] + LIFT
    assert admit >= keep
    assert 0.2 < keep <= 0.9
    assert 0.4 < admit <= 0.95


def test_bars_lifted_over_another_reading_must_beat_its_precision_not_the_readers() -> None:
    # Over the bar: 6 right and 4 wrong, the head's reading half sure of each; another reading
    # already keeps the 6 right alone (precision 1.0), so no pair lifts over it.
    marked = [_marked(1.0, n < 6, n) for n in range(10)]
    p = np.array([0.9] * 6 + [0.6] * 2 + [0.3] * 2)
    known = np.ones(10, dtype=bool)

    keep, _, _, chosen = choose(marked, p, known, labelled=6, lift=0.0)
    assert (keep, chosen["right"], chosen["made"]) == (0.65, 6, 6)
    with pytest.raises(SystemExit, match="precision"):
        choose(marked, p, known, labelled=6, lift=0.01, over=[n < 6 for n in range(10)])
    keep, _, _, chosen = choose(marked, p, known, 6, lift=0.0, over=[n < 8 for n in range(10)])
    assert chosen["precision"] >= 0.75
    assert chosen["right"] == 6


def test_no_pair_reaching_the_lift_stops_the_fit() -> None:
    marked = [_marked(1.0, n % 2 == 0, n) for n in range(6)]

    with pytest.raises(SystemExit, match="precision"):
        choose(marked, np.full(6, 0.5), np.ones(6, dtype=bool), labelled=3)


def test_the_regression_is_returned_on_the_raw_columns() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 2)) * [1.0, 50.0] + [0.0, 100.0]
    y = (x[:, 0] + (x[:, 1] - 100.0) / 50.0 + rng.normal(scale=0.5, size=400) > 0).astype(float)

    weights, bias = fit_regression(x, y)
    p = probabilities(x, weights, bias)

    assert ((p > 0.5) == (y == 1)).mean() > 0.85
    assert weights[0] == pytest.approx(weights[1] * 50.0, rel=0.3)


def test_a_reader_of_ones_own_is_read_only_with_its_pin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "head.npz"), "--reader", str(tmp_path / "reader.onnx")])

    assert "--reader-sha256: required with --reader" in capsys.readouterr().err


def test_a_fit_without_a_file_to_write_stops_before_reading(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--lift", "0.03"])

    assert "--out: required to write a file" in capsys.readouterr().err


def _half(tmp_path: Path, half: str, cases: str) -> Path:
    """A blind set's half (`dev` or `heldout`) holding one domain's cases."""
    directory = tmp_path / "blind99" / half
    directory.mkdir(parents=True)
    (directory / "cases-sales.yaml").write_text(cases, encoding="utf-8")
    return directory


_DEV_CASES = """
- id: sales-t-001
  domain: sales
  kind: lead
  sessions:
    - at: "2026-01-12T10:00:00Z"
      channel: chat
      lines:
        - {role: agent, text: "Which car do you drive, and what budget?"}
        - {role: subject, text: "A 2019 Mazda CX-5, and about 40k for the whole thing"}
      expect:
        proposals:
          - {field: vehicle, value: "2019 mazda CX-5", keywords: ["CX-5"]}
          - {field: budget, value: "about 40,000 dollars", keywords: ["40"]}
          - {field: team_size, value: "Mazda", keywords: ["Mazda"], origin: inferred}
          - {field: job_title, value: "Which car", keywords: ["car"]}
  writer: T
"""


def test_a_dev_halfs_bank_holds_the_stated_values_a_subject_line_says_word_for_word(
    tmp_path: Path,
) -> None:
    # Recorded in other words ("40,000 dollars"), inferred, or said only by the agent: none
    # of them is words a span of the subject's line can be.
    dev = _half(tmp_path, "dev", _DEV_CASES)

    assert dev_values([dev]) == {"vehicle": ["2019 mazda CX-5"]}


def test_a_held_out_half_never_joins_the_bank(tmp_path: Path) -> None:
    held_out = _half(tmp_path, "heldout", _DEV_CASES)

    with pytest.raises(SystemExit, match="never read"):
        dev_values([held_out])


def test_banks_merge_by_field_without_repeating_a_value() -> None:
    assert merged({"plan": ["Pro", "Team"]}, {"plan": ["Pro", "Basic"], "name": ["Ana"]}) == {
        "name": ["Ana"],
        "plan": ["Basic", "Pro", "Team"],
    }


_TWO_SESSIONS = """
- id: sales-t-002
  domain: sales
  kind: lead
  sessions:
    - at: "2026-01-12T10:00:00Z"
      channel: chat
      lines:
        - {role: agent, text: "What budget are you working with?"}
        - {role: subject, text: "Around 40k, and we use Acme today"}
      expect:
        proposals:
          - {field: budget, value: "around 40,000", keywords: ["40"]}
    - at: "2026-02-12T10:00:00Z"
      channel: chat
      lines:
        - {role: subject, text: "Budget is 55k now"}
      expect:
        proposals:
          - {field: budget, value: "55,000", keywords: ["55"], updates: "40,000"}
  writer: T
"""


class CannedReader:
    """Answers every subject line the same way: budget "40k" over the bar, supplier "Acme"
    under it by 1, and team_size "we" far under the head's reach."""

    def __init__(self) -> None:
        self.lines_read: list[str] = []

    def answers_sync(
        self, lines: list[LineRead], fields: object, lists: object
    ) -> list[FieldAnswer]:
        self.lines_read += [line.text for line in lines]
        return [
            answer
            for line in lines
            for answer in (
                FieldAnswer(line.index, "budget", 6, 9, "40k", 7.0),
                FieldAnswer(line.index, "supplier", 0, 4, "Acme", 4.5),
                FieldAnswer(line.index, "team_size", 0, 2, "we", -1.0),
            )
        ]


def test_a_dev_halfs_first_sessions_give_the_head_answers_marked_by_their_keywords(
    tmp_path: Path,
) -> None:
    dev = _half(tmp_path, "dev", _TWO_SESSIONS)
    reader = CannedReader()

    marked, expected = dev_answers(reader, [dev], first=10)  # type: ignore[arg-type]

    # Only the first session is read: later ones hold fields, whose answers pass as read.
    assert reader.lines_read == ["Around 40k, and we use Acme today"]
    assert expected == 1
    by_field = {m.answer.field: m for m in marked}
    assert set(by_field) == {"budget", "supplier"}  # "we" is past the head's reach
    assert (by_field["budget"].right, by_field["budget"].gold) == (True, (10,))
    assert (by_field["supplier"].right, by_field["supplier"].gold) == (False, ())
    assert by_field["budget"].answer.over_bar == pytest.approx(1.5)
    assert by_field["supplier"].answer.over_bar == pytest.approx(-1.0)
    assert "supplier" in by_field["budget"].answer.others
    assert (by_field["budget"].answer.line, by_field["budget"].answer.agent) == (
        "Around 40k, and we use Acme today",
        "What budget are you working with?",
    )


def test_every_session_marks_each_answer_by_its_own_sessions_expected_proposals(
    tmp_path: Path,
) -> None:
    dev = _half(tmp_path, "dev", _TWO_SESSIONS)
    reader = CannedReader()

    marked, expected = dev_answers(reader, [dev], first=10, every_session=True)  # type: ignore[arg-type]

    assert reader.lines_read == ["Around 40k, and we use Acme today", "Budget is 55k now"]
    assert expected == 2
    budgets = [m for m in marked if m.answer.field == "budget"]
    # The reader's "40k" holds the first session's keyword, and not the second's ("55").
    assert [(m.answer.line, m.right, m.gold) for m in budgets] == [
        ("Around 40k, and we use Acme today", True, (10,)),
        ("Budget is 55k now", False, ()),
    ]
    assert budgets[1].answer.agent == ""


def test_a_held_out_half_is_never_fitted_on(tmp_path: Path) -> None:
    held_out = _half(tmp_path, "heldout", _TWO_SESSIONS)

    with pytest.raises(SystemExit, match="never read"):
        dev_answers(CannedReader(), [held_out])  # type: ignore[arg-type]


def test_the_frontier_reads_every_lift_and_the_packaged_head_on_the_same_answers() -> None:
    # The answers of the first test: the reader's bars at 0.8 precision; at every lift the
    # head's bars keep the eleven right answers and drop the five wrong ones.
    marked = [_marked(1.0, True, n) for n in range(8)] + [
        _marked(1.0, False, 8 + n) for n in range(2)
    ]
    marked += [_marked(-1.0, True, 10 + n) for n in range(3)]
    marked += [_marked(-1.0, False, 13 + n) for n in range(3)]
    p = np.array([0.9] * 8 + [0.2] * 2 + [0.95] * 3 + [0.4] * 3)
    known = np.ones(len(marked), dtype=bool)
    # A packaged head that keeps every answer over its bar and admits none under it.
    shipped = [True] * 10 + [False] * 6

    report = frontier(marked, p, known, 11, shipped)

    assert report["the reader's bars"] == outcome(marked, [True] * 10 + [False] * 6, 11)
    assert report["the packaged head"] == report["the reader's bars"]
    chosen = report["chosen out of fold, by lift"]
    assert isinstance(chosen, dict)
    assert set(chosen) == {"0.0", "0.005", "0.01", "0.02", "0.03"}
    for lift in chosen.values():
        assert isinstance(lift, dict)
        assert lift["made"] == lift["right"] == 11
