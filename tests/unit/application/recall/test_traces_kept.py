"""The traces recall keeps of memories it read are bounded: the least recently used go first."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.memory.types import Namespace
from factledger.application.recall.forget_filter import Traces

NS = Namespace("subject-traces")


@dataclass(frozen=True)
class Trace:
    slot: str | None
    document_id: str | None
    source_indexes: tuple[int, ...] = ()


def test_traces_are_bounded_and_the_least_recently_used_go_first() -> None:
    traces = Traces(kept=2)
    first, second, third = Trace("phone", "d1"), Trace("email", "d2"), Trace(None, "d3")
    traces.put(NS, "m1", first)
    traces.put(NS, "m2", second)
    assert traces.get(NS, "m1") == first  # now the most recently used
    traces.put(NS, "m3", third)
    assert traces.get(NS, "m2") is None
    assert (traces.get(NS, "m1"), traces.get(NS, "m3")) == (first, third)
    assert traces.get(Namespace("another"), "m1") is None
