"""A candidate's changes on the judges read against their cases' noise: a paired bootstrap
of each judge's cases, Holm's correction over every judge's losses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factledger.bench.evalsets.judge_noise import (
    FIGURES,
    Change,
    holm,
    judge_noise,
    paired_cases,
    table,
)
from factledger.bench.evalsets.judges import main
from factledger.bench.evalsets.score import Scores, Tally

FACTS, PRECISION, UPDATES = FIGURES[:3]


def case(**counts: int) -> dict[str, int]:
    return dict.fromkeys(Tally.__slots__, 0) | counts


def half(cases: dict[str, dict[str, int]]) -> dict[str, object]:
    return {"set": "heldout", "per_case": cases}


def uniform(n: int, **counts: int) -> dict[str, dict[str, int]]:
    return {f"w/c{i:03d}": case(**counts) for i in range(n)}


def by_name(changes: list[Change], judge: str, figure: str) -> Change:
    return next(c for c in changes if c.judge == judge and c.figure.name == figure)


def test_a_run_read_against_itself_changes_nothing_and_flags_nothing() -> None:
    run = [half(uniform(50, matched=3, made=4, made_right=3, hits=2))]

    noise = judge_noise({"J": (run, run)}, resamples=2_000)

    assert all(c.change == 0 and c.p_loss == 1.0 for c in noise.per_judge + noise.pooled)
    assert noise.flagged == []


def test_one_fact_lost_in_one_case_of_a_hundred_is_noise() -> None:
    base = uniform(100, matched=5)
    candidate = dict(base) | {"w/c007": case(matched=4)}

    noise = judge_noise({"J": ([half(base)], [half(candidate)])}, resamples=20_000)

    lost = by_name(noise.per_judge, "J", "facts found")
    assert lost.change == -1
    # The candidate is as good in every draw that leaves the case out: (1 - 1/100) ** 100.
    assert lost.p_loss == pytest.approx(0.366, abs=0.01)
    assert noise.flagged == []


def test_a_fact_lost_in_most_cases_is_a_loss_beyond_noise() -> None:
    base = uniform(100, matched=5, made=5, made_right=5)
    candidate = {
        key: case(matched=4, made=5, made_right=4) if i % 3 else counts
        for i, (key, counts) in enumerate(base.items())
    }

    noise = judge_noise({"J": ([half(base)], [half(candidate)])}, resamples=5_000)

    assert {(c.judge, c.figure.name) for c in noise.flagged} == {
        ("J", "facts found"),
        ("J", "precision"),
    }
    assert by_name(noise.per_judge, "J", "precision").change == pytest.approx(
        4.34 / 5 - 1, abs=0.01
    )


def test_the_pool_draws_every_judge_within_itself() -> None:
    same = [half(uniform(40, matched=2, made=3, made_right=2))]
    base = uniform(40, made=10, made_right=9)
    worse = {key: case(made=10, made_right=8) for key in base}

    noise = judge_noise({"A": (same, same), "B": ([half(base)], [half(worse)])}, resamples=2_000)

    pooled = by_name(noise.pooled, "pooled", "precision")
    assert pooled.base == pytest.approx((80 + 360) / (120 + 400))
    assert pooled.candidate == pytest.approx((80 + 320) / (120 + 400))
    assert pooled.p_loss == 0.0
    assert by_name(noise.per_judge, "A", "precision").p_loss == 1.0


def test_a_loss_of_a_figure_where_lower_is_better_is_a_rise() -> None:
    base = uniform(60, stale=0)
    candidate = {key: case(stale=1) for key in base}

    noise = judge_noise({"J": ([half(base)], [half(candidate)])}, resamples=2_000)

    stale = by_name(noise.per_judge, "J", "stale notes")
    assert (stale.change, stale.p_loss) == (60, 0.0)
    assert ("J", "stale notes") in {(c.judge, c.figure.name) for c in noise.flagged}


def change(p_loss: float, loss: bool = True, judge: str = "J") -> Change:
    return Change(judge, FACTS, 10.0, 9.0 if loss else 11.0, p_loss)


def test_holm_steps_down_the_bars_from_the_smallest_p() -> None:
    found = holm([change(0.04), change(0.001), change(0.01)], alpha=0.05)

    assert sorted(c.p_loss for c in found) == [0.001, 0.01, 0.04]


def test_holm_stops_at_the_first_p_over_its_bar() -> None:
    # Bars 0.05 / 3 and 0.05 / 2 for the two smallest: 0.03 passes the first, not the second.
    assert holm([change(0.03), change(0.04), change(1.0, loss=False)], alpha=0.05) == []
    assert [c.p_loss for c in holm([change(0.01), change(0.04)], alpha=0.05)] == [0.01, 0.04]


def test_runs_of_different_cases_or_without_per_case_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="different cases"):
        paired_cases([half(uniform(3))], [half(uniform(4))])
    with pytest.raises(ValueError, match="without per-case counts"):
        paired_cases([{"set": "dev"}], [half(uniform(3))])
    with pytest.raises(ValueError, match="halves"):
        paired_cases([half(uniform(3))], [])


def test_the_scorer_keeps_each_cases_counts_by_writer_and_id() -> None:
    from factledger.bench.evalsets.cases import Case

    scores = Scores()
    first = Case("c-001", "w", "sales", "lead", (), (), ())
    scores.add(first, Tally(matched=2, made=3))
    scores.add(Case("c-002", "w", "sales", "lead", (), (), ()), Tally(matched=1))

    per_case = scores.per_case()

    assert (per_case["w/c-001"]["matched"], per_case["w/c-001"]["made"]) == (2, 3)
    assert per_case["w/c-002"]["matched"] == 1
    assert scores.as_dict()["all"]["matched"] == 3


def test_the_table_bolds_the_losses_beyond_noise() -> None:
    base = uniform(80, matched=3, updates_matched=1)
    candidate = {key: case(matched=2, updates_matched=1) for key in base}

    report = table(judge_noise({"J1": ([half(base)], [half(candidate)])}, resamples=1_000))

    assert "| J1 | **-80 (0.0000)** | +0.0000 | +0 |" in report
    assert "J1 facts found (p 0.00000)" in report
    assert UPDATES.name in report.splitlines()[0]
    assert PRECISION.over == "made"


def test_the_noise_command_reads_the_judges_scored_in_both_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = uniform(30, matched=3)
    for run in ("base", "candidate"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "J1.json").write_text(json.dumps([half(base)]), encoding="utf-8")

    main(["noise", str(tmp_path / "base"), str(tmp_path / "candidate"), "--resamples", "500"])

    out = capsys.readouterr().out
    assert "| J1 | +0 |" in out
    assert "(Holm, family-wise 0.05 over 7 tests): none." in out
    assert "| J2 |" not in out
