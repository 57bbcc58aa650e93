"""The turn-reads bench counts what recall reads from a real SQLite ledger per turn: one
hand-off to a worker thread and one aggregate read now, two of each through the two ports."""

from __future__ import annotations

from factledger.bench.recall_turn_reads import render, run


async def test_one_read_per_turn_against_two_through_the_ports() -> None:
    report = await run(subjects=5, calls=100, concurrency=2)
    counts = {name: (handoffs, reads) for name, _, _, _, handoffs, reads in report.rows}
    assert counts == {
        "backend search alone": (0.0, 0.0),
        "recall, profile and mask read apart (two reads)": (2.0, 2.0),
        "recall, one read of the subject (now)": (1.0, 1.0),
    }
    assert "p50 over the search's p50" in render(report)
