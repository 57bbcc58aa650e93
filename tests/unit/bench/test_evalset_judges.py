"""The judges' runner: which halves each judge reads, how a run is pooled and compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factledger.bench.evalsets.judges import JUDGES, Judge, Pooled, compare, main, pooled, run


def scored_half(**counts: int) -> dict[str, object]:
    row = {"recall": 0.5, "precision": 0.9, **dict.fromkeys(Pooled.__slots__, 0), **counts}
    return {"set": "heldout", "cases": {"all": row, "sales": dict(row)}}


def write_run(directory: Path, judge: str, *halves: dict[str, object]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{judge}.json").write_text(json.dumps(list(halves)), encoding="utf-8")


def test_every_judge_reads_case_halves_that_are_in_the_repository() -> None:
    for judge in JUDGES:
        for directory in judge.directories():
            assert sorted(directory.glob("cases-*.yaml")), directory


def test_no_half_is_read_by_two_judges() -> None:
    halves = [half for judge in JUDGES for half in judge.halves]

    assert len(halves) == len(set(halves))


def test_a_judges_figures_are_its_halves_all_rows_summed() -> None:
    total = pooled(
        [
            scored_half(expected=10, matched=6, made=8, made_right=7, updates=2, stale_top3=1),
            scored_half(expected=30, matched=20, made=22, made_right=20, updates_matched=1),
        ]
    )

    assert (total.expected, total.matched, total.made, total.made_right) == (40, 26, 30, 27)
    assert (total.updates, total.updates_matched, total.stale_top3) == (2, 1, 1)
    assert total.recall == pytest.approx(0.65)
    assert total.precision == pytest.approx(0.9)


def test_a_run_scores_each_judge_with_the_options_given(tmp_path: Path) -> None:
    commands: list[list[str]] = []
    judges = [Judge("A", ("blind36/dev",)), Judge("B", ("blind36/heldout",))]

    run(tmp_path / "out", ["--held-change-min", "0.7"], judges, jobs=1, score=commands.append)

    assert [c[c.index("--json") + 1] for c in commands] == [
        str(tmp_path / "out" / "A.json"),
        str(tmp_path / "out" / "B.json"),
    ]
    first = commands[0]
    assert first[1:3] == ["-m", "factledger.bench.evalsets"]
    assert first[3].endswith("blind36/dev")
    assert first[first.index("--held-change-min") + 1] == "0.7"
    assert first[first.index("--extractor") + 1] == "learned"


def test_compare_sets_each_judge_beside_its_base_and_pools_them(tmp_path: Path) -> None:
    base, candidate = tmp_path / "base", tmp_path / "candidate"
    write_run(
        base,
        "J1",
        scored_half(expected=100, matched=60, made=70, made_right=63, forget_sessions=4),
    )
    write_run(
        candidate,
        "J1",
        scored_half(
            expected=100,
            matched=62,
            made=70,
            made_right=62,
            forget_sessions=4,
            forgets_noticed_count=3,
            forget_false_alarms=1,
        ),
    )
    write_run(base, "J2", scored_half(expected=50, matched=30, made=40, made_right=36))
    write_run(candidate, "J2", scored_half(expected=50, matched=31, made=41, made_right=37))
    write_run(base, "J6", scored_half(expected=9, matched=9, made=9, made_right=9))  # one run only

    table = compare(base, candidate).splitlines()

    rows = [line for line in table if line.startswith("| J") or line.startswith("| pooled")]
    assert [r.split("|")[1].strip() for r in rows] == ["J1", "J2", "pooled"]
    assert "60 (0.6000) -> 62 (0.6200) of 100" in rows[0]
    assert "0.9000 -> 0.8857" in rows[0]
    assert "0 (0) -> 3 (1) of 4" in rows[0]
    assert "90 (0.6000) -> 93 (0.6200) of 150" in rows[2]


def test_compare_refuses_scorer_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "a", "b", "--", "--value-fit", "off"])

    assert "no scorer options" in capsys.readouterr().err


def test_a_run_of_no_known_judge_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["run", str(tmp_path), "--only", "J99"])

    assert "no judge of" in capsys.readouterr().err


def test_j1_is_the_twelve_held_out_halves_of_record() -> None:
    j1 = next(j for j in JUDGES if j.name == "J1")

    assert len(j1.halves) == 12
    assert j1.halves[0] == "blind/heldout"
    assert all(half.endswith("/heldout") for half in j1.halves)
