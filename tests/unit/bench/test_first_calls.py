"""The lab's first-calls table: a row per start, the contenders in turns, each call's medians
after its rows (the starts themselves stood in for: the served path has tests of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.bench import first_calls


def test_the_table_has_a_row_per_start_in_turns_and_the_medians_after(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seconds = iter([0.5, 2.0, 0.9, 1.0, 3.0, 0.8, 0.7, 2.5])  # this, baseline, in turns
    monkeypatch.setattr(
        first_calls,
        "one_start",
        lambda python, call, credentials: (1.0, next(seconds), 0.02),
    )
    first_calls.main(["--runs", "2", "--baseline-python", str(Path("/usr/bin/python3"))])
    lines = capsys.readouterr().out.splitlines()[2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    message = [r for r in rows if r[0] == "first message"]
    builds = ["this", "baseline", "this", "baseline", "this, median", "baseline, median"]
    assert [r[1] for r in message] == builds
    assert [r[3] for r in message[4:]] == ["**0.70**", "**1.50**"]
    mcp = [r for r in rows if r[0] == "first MCP initialize"]
    assert [r[3] for r in mcp[:4]] == ["3.00", "0.80", "0.70", "2.50"]
    assert [r[3] for r in mcp[4:]] == ["**1.85**", "**1.65**"]
    assert [r[4] for r in rows] == ["20", "20", "20", "20", "", ""] * 2
