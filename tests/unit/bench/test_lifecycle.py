"""The generated lifecycle suite and its scores, on the in-memory backend and a leaky one."""

from __future__ import annotations

from typing import Any, cast

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.clocks import SystemClock
from factledger.application.memory.ports import MemoryBackend
from factledger.bench.lifecycle_suite import generate_suite
from factledger.bench.workloads.lifecycle import run_lifecycle


def test_the_suite_is_reproducible_from_its_seed() -> None:
    assert generate_suite(5, seed=3) == generate_suite(5, seed=3)
    assert generate_suite(5, seed=3) != generate_suite(5, seed=4)


def test_no_two_subjects_share_a_made_up_name() -> None:
    suite = generate_suite(30, seed=1)
    names = [token for subject in suite for token in subject.tokens]
    assert len(names) == len(set(names))


def test_every_budget_session_updates_the_same_slot() -> None:
    subject = generate_suite(1, seed=1, budgets=4)[0]
    budget = next(check for check in subject.checks if check.slot == "budget")
    assert len(budget.stale) == 3
    assert len(subject.sessions) == 3 + 4  # setup + switch + move + 3 budget updates + team


async def test_the_in_memory_backend_keeps_the_lifecycle_promises(
    backend: InMemoryMemoryBackend,
) -> None:
    suite = generate_suite(3, seed=11, budgets=3)
    scores = await run_lifecycle(backend, "t", suite, SystemClock())
    assert scores.subjects == 3
    assert scores.slot_checks == 9
    assert scores.current_above_stale == 9
    assert scores.stale_only_answers == 0
    assert scores.inferred_facts > 0
    assert scores.inferred_leaks == 0
    assert scores.forgotten_checks == 3
    assert scores.forgotten_recalled == 0
    assert scores.expired_checks == 3
    assert scores.expired_recalled == 0
    assert scores.cross_namespace_queries > 0
    assert scores.cross_namespace_leaks == 0


async def test_a_backend_that_mixes_namespaces_is_caught_leaking(leaky_backend: Any) -> None:
    suite = generate_suite(3, seed=11, budgets=2)
    scores = await run_lifecycle(cast("MemoryBackend", leaky_backend), "t", suite, SystemClock())
    assert scores.cross_namespace_leaks > 0
