"""Rate limits as the generic cell rate algorithm (GCRA): one number per key, the theoretical
arrival time (`tat`) of its next request, so a store shared by every process holds one row per
key and admits a request with one atomic statement.

A key limited to `per_s` requests a second with bursts of `burst` admits a request at `now` when
`max(tat, now) + 1/per_s - now <= burst/per_s`, and then moves `tat` to `max(tat, now) +
1/per_s`; a refused request moves nothing. This is a token bucket of `burst` tokens refilled at
`per_s`, told by when it will be full rather than by how full it is.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from factledger.application.errors import StoreUnavailableError

Clock = Callable[[], float]


class RateStoreUnavailableError(StoreUnavailableError):
    """The shared rate-limit store failed; the driver error is kept as `__cause__`."""


@dataclass(frozen=True, slots=True)
class Rate:
    """`per_s` requests a second, `burst` at once; a take of it counts `tokens` requests at
    once (`times`), admitted only when all of them are."""

    per_s: float
    burst: int
    tokens: int = 1

    def times(self, tokens: int) -> Rate:
        """The same limit, taken `tokens` requests at a time: a lease of them (`api.http`'s
        rate leases), admitted as one request would be when the key has that many left."""
        return replace(self, tokens=tokens)

    @property
    def interval_s(self) -> float:
        """How far a take moves the key's arrival time: `tokens` requests' worth."""
        return self.tokens / self.per_s

    @property
    def tolerance_s(self) -> float:
        return self.burst / self.per_s

    @property
    def admits_within_s(self) -> float:
        """`tolerance_s` and a microsecond: the burst's last request is never refused by a
        rounding of the sums that led to it."""
        return self.tolerance_s + 1e-6


def admitted(tat: float, now: float, rate: Rate) -> bool:
    return max(tat, now) + rate.interval_s - now <= rate.admits_within_s


def wait_s(tat: float, now: float, rate: Rate) -> float:
    """Seconds until a key whose theoretical arrival time is `tat` admits a request."""
    return max(0.0, max(tat, now) + rate.interval_s - now - rate.tolerance_s)


class RateStore(Protocol):
    """Where the keys' arrival times live.

    - `take` admits one request of `key` (returns 0, and counts it) or returns the seconds
      until one would be admitted (and counts nothing), atomically for every process sharing
      the store.
    - `take_then` is `take` of `first` and, only when it was admitted, `take` of `then`, in one
      round trip; it returns both waits (the second 0 when it was not asked).
    - `wait_s` is what `take` would return, counting nothing.
    """

    async def take(self, key: str, rate: Rate) -> float: ...

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]: ...

    async def wait_s(self, key: str, rate: Rate) -> float: ...


class InProcessRateStore:
    """Arrival times in this process only: each process counts on its own. At most `max_keys`
    are kept; the least recently used is dropped, and a dropped key starts with a full burst.
    Thread-safe."""

    def __init__(self, *, max_keys: int = 100_000, clock: Clock = time.monotonic) -> None:
        self._max_keys, self._clock = max_keys, clock
        self._tats: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def take_now(self, key: str, rate: Rate) -> float:
        with self._lock:
            now = self._clock()
            tat = self._tats.get(key, now)
            if not admitted(tat, now, rate):
                self._tats.move_to_end(key)
                return wait_s(tat, now, rate)
            self._tats[key] = max(tat, now) + rate.interval_s
            self._tats.move_to_end(key)
            if len(self._tats) > self._max_keys:
                self._tats.popitem(last=False)
            return 0.0

    def wait_now(self, key: str, rate: Rate) -> float:
        with self._lock:
            now = self._clock()
            return wait_s(self._tats.get(key, now), now, rate)

    async def take(self, key: str, rate: Rate) -> float:
        return self.take_now(key, rate)

    async def take_then(
        self, first: tuple[str, Rate], then: tuple[str, Rate]
    ) -> tuple[float, float]:
        return self.take_then_now(first, then)

    def take_then_now(self, first: tuple[str, Rate], then: tuple[str, Rate]) -> tuple[float, float]:
        waited = self.take_now(*first)
        return (waited, 0.0) if waited else (0.0, self.take_now(*then))

    async def wait_s(self, key: str, rate: Rate) -> float:
        return self.wait_now(key, rate)
