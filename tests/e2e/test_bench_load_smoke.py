"""A small run of `factledger-lab bench load`: two agents for forty requests against one real
`factledger serve` on loopback (the hashing embedder keeps the server's start short).

The run is bounded by its count of requests, not by its seconds: how many requests fit in a
few seconds depends on the machine and its load, and a smoke test must not."""

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
            "120",  # a bound for a hang only: the count below ends the run
            "--max-requests",
            "40",
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
    assert int(cells[2]) >= 40  # requests: one whole session per agent and more
    assert (cells[10], cells[11]) == ("0", "0")  # no 5xx, no transport error
    assert cells[12] == "0"  # no 4xx: the agents' requests are all valid
    latencies = [line for line in result.output.splitlines() if line.startswith("| embedded")][-1]
    for cell in latencies.strip("|").split("|")[2:]:
        assert cell.strip().split(" / ")[2] != "0", latencies  # p99: every route ran


def test_the_load_bench_refuses_unbounded_runs() -> None:
    result = CliRunner().invoke(app, ["bench", "load", "--seconds", "100000"])
    assert result.exit_code != 0
    assert "seconds" in result.output
