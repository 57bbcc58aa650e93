"""A small run of `factledger-lab bench load`: two agents for a few seconds against one real
`factledger serve` on loopback (the hashing embedder keeps the server's start short)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.bench.cli.main import app


def test_the_load_bench_drives_a_real_server_and_prints_its_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTLEDGER_EMBEDDER__KIND", "hashing")
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "load",
            "--topologies",
            "embedded",
            "--clients",
            "2",
            "--seconds",
            "3",
            "--max-requests",
            "400",
            "--think-ms",
            "20",
            "--workdir",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = next(line for line in result.output.splitlines() if line.startswith("| embedded"))
    cells = [cell.strip() for cell in summary.strip("|").split("|")]
    assert cells[1] == "2"  # clients
    assert int(cells[2]) > 10  # requests: every route ran
    assert (cells[10], cells[11]) == ("0", "0")  # no 5xx, no transport error
    assert cells[12] == "0"  # no 4xx: the agents' requests are all valid
    assert "recall p50/p95/p99" in result.output


def test_the_load_bench_refuses_unbounded_runs() -> None:
    result = CliRunner().invoke(app, ["bench", "load", "--seconds", "100000"])
    assert result.exit_code != 0
    assert "seconds" in result.output
