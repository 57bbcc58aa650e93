"""The latency workload: figures are produced, and a stalling backend shows up as fail-open."""

from __future__ import annotations

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.clocks import SystemClock
from factledger.bench.workloads.latency import LatencySizes, latency_steps, run_latency
from factledger.testing.stalling_backend import Fault, StallingBackend

TINY = LatencySizes(corpus=10, sequential=5, visibility=2, budgeted=6, agents=3, per_agent=2)


async def test_a_healthy_backend_never_fails_open(backend: InMemoryMemoryBackend) -> None:
    steps: list[int] = []
    scores = await run_latency(
        backend, "t", TINY, SystemClock(), transcripts=True, seed=1, advance=steps.append
    )
    summary = scores.summary()
    assert summary["recall_samples"] == 5
    assert summary["recall_p50_ms"] <= summary["recall_p99_ms"]
    assert len(scores.record_visible_ms) == len(scores.transcript_visible_ms) == 2
    assert summary["not_visible"] == 0
    assert summary["fail_open_rate"] == 0.0
    assert summary["throughput_rps"] > 0
    assert sum(steps) == latency_steps(TINY)


async def test_a_stalling_backend_fails_open_at_the_budget(
    backend: InMemoryMemoryBackend,
) -> None:
    stalling = StallingBackend(
        backend, fault=Fault.STALL, stall_s=1.3, faulty_calls=frozenset({"search"})
    )
    sizes = LatencySizes(corpus=2, sequential=1, visibility=0, budgeted=4, agents=4, per_agent=1)
    scores = await run_latency(stalling, "t", sizes, SystemClock(), transcripts=False, seed=1)
    assert scores.budgeted == 4
    assert scores.fail_open_rate == 1.0
    assert stalling.cancelled > 0  # recall gave up on the stalled searches at its budget
