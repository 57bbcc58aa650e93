"""`factledger-lab bench forget-filter` times every case and checks the filter on the way."""

from __future__ import annotations

from factledger.bench.forget_filter import render, run


async def test_the_in_memory_cases_are_timed_and_rendered() -> None:
    timings = await run(backends=("in-memory",), calls=100, extra=3)
    assert [(t.case, t.part) for t in timings] == [
        ("forgot nothing", "whole filter"),
        ("forgot an unrelated memory", "whole filter"),
        ("forgot an unrelated memory", "repeats check"),
        ("forgot the replaced value", "whole filter"),
        ("forgot the replaced value", "repeats check"),
    ]
    assert all(0 <= t.p50_ms <= t.p95_ms for t in timings)
    assert "| in-memory | forgot the replaced value | repeats check | 100 |" in render(timings)
