"""Latency and fault injection for the local Supermemory server. Both are seedable.

- `LatencyProfile`: every matching request waits a sampled delay first: a normal around
  `typical_s` (floored at `minimum_s`), or with probability `stall_probability` a stall of
  `stall_s` (the observed ~0.5 s typical with a rare 38 s stall is `LatencyProfile.observed()`).
- `FaultPlan`: scripted faults consumed in order by the matching requests (`push`), plus random
  ones by status code and probability (`rates`). A fault answers with its status (429 carries
  `Retry-After`) or, with `stall_s`, hangs first and then serves the request normally.

Operation names: add, documents.get, documents.update, documents.delete, search, list,
memories.get, memories.forget, namespaces.delete, namespaces.list.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]

ERROR_TEXT = {
    402: "Insufficient credits",
    403: "Forbidden: namespace outside this key's scope",
    409: "Conflict",
    429: "Too many requests",
    500: "Internal server error",
    502: "Bad gateway",
    503: "Service unavailable",
}


@dataclass(frozen=True, slots=True)
class LatencyProfile:
    typical_s: float = 0.5
    jitter_s: float = 0.15
    minimum_s: float = 0.05
    stall_s: float = 38.0
    stall_probability: float = 0.0
    operations: frozenset[str] | None = None  # None: every operation
    seed: int = 0

    @classmethod
    def observed(cls, *, seed: int = 0) -> LatencyProfile:
        """The shape reported for the live API: ~0.5 s typical, a 38 s stall now and then."""
        return cls(typical_s=0.5, jitter_s=0.15, stall_s=38.0, stall_probability=0.01, seed=seed)


class LatencySampler:
    def __init__(self, profile: LatencyProfile) -> None:
        self.profile = profile
        self._rng = random.Random(profile.seed)

    def delay(self, operation: str) -> float:
        p = self.profile
        if p.operations is not None and operation not in p.operations:
            return 0.0
        if self._rng.random() < p.stall_probability:
            return p.stall_s
        return max(p.minimum_s, self._rng.gauss(p.typical_s, p.jitter_s))


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected fault. `status=None` with `stall_s` hangs, then serves normally."""

    status: int | None = None
    retry_after_s: float | None = None
    stall_s: float = 0.0
    operations: frozenset[str] | None = None

    def applies_to(self, operation: str) -> bool:
        return self.operations is None or operation in self.operations

    def response(self) -> tuple[int, JsonObject, dict[str, str]]:
        status = self.status or 500
        headers: dict[str, str] = {}
        if self.retry_after_s is not None:
            headers["Retry-After"] = f"{self.retry_after_s:g}"
        return status, {"error": ERROR_TEXT.get(status, "Error")}, headers


@dataclass(slots=True)
class FaultPlan:
    scripted: deque[Fault] = field(default_factory=deque)
    rates: dict[int, float] = field(default_factory=dict)  # status -> probability per request
    seed: int = 0
    served: list[tuple[str, int | None]] = field(default_factory=list)  # (operation, status)
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def push(self, fault: Fault, *, times: int = 1) -> None:
        self.scripted.extend([fault] * times)

    def clear(self) -> None:
        self.scripted.clear()
        self.rates.clear()

    def next_fault(self, operation: str) -> Fault | None:
        for index, fault in enumerate(self.scripted):
            if fault.applies_to(operation):
                del self.scripted[index]
                self.served.append((operation, fault.status))
                return fault
        for status, probability in sorted(self.rates.items()):
            if self._rng.random() < probability:
                self.served.append((operation, status))
                retry = 1.0 if status == 429 else None
                return Fault(status=status, retry_after_s=retry)
        return None
