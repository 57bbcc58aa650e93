"""What a process keeps between requests so that the shared rate-limit store is not asked on
every one (`rate_limit.RateLimiter`):

- `RateLeases`: tokens of a principal's limit and its tenant's, taken from the shared store in
  one round trip (a take of `size` requests at once, `Rate.times`) and spent here, one per
  request, for at most `LEASE_S`. A lease's size follows what this process used of the last
  one: it starts at 1 (a round trip per request, exactly as without leases), doubles while
  leases are used up before they lapse, falls back to what was used when one lapsed half
  spent, and goes back to 1 (and stays there until it lapses) when the store refused a lease.
  It never exceeds `lease_cap` of either limit.
- `Refusals`: keys the store refused, answered 429 here until their wait is over, exactly as
  the store would answer (nothing gives a token back), so a client hammering past its limit
  costs no round trip per request.
- `ClearAddresses`: client addresses the shared store found clear of failed authentications
  in the last `ADDRESS_CLEAR_S`, and for which this process has counted no failure since.

The bounds this costs (ADR 0096): every leased token was counted in the shared store before
it is spent, so over any window a key admits at most its limit plus the tokens processes held
unspent at the window's start (at most `lease_cap` each, taken within `LEASE_S`); a request
may be refused while other processes hold at most `lease_cap` unspent tokens each, and tokens
a lease did not spend before it lapsed are not given back (the key refills them at its rate).
An address locked out by failures counted in another process is refused here within
`ADDRESS_CLEAR_S`; failures counted here are seen at once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from cachetools import TTLCache

from factledger.application.rate_limits import Clock, Rate

LEASE_S = 1.0  # a lease's tokens are spent within this, or not at all
MAX_LEASE = 64  # tokens of one lease at most, whatever the limits
ADDRESS_CLEAR_S = 1.0  # an address found clear is not asked about again within this


def lease_cap(rate: Rate) -> int:
    """The most tokens of `rate` one lease may take: an eighth of its burst and a quarter of
    what it refills in `LEASE_S`, at most `MAX_LEASE`, at least 1 (a lease of one token is a
    take per request, as without leases)."""
    return max(1, min(MAX_LEASE, rate.burst // 8, int(rate.per_s * LEASE_S / 4)))


@dataclass(slots=True)
class _Lease:
    size: int  # tokens taken at once
    left: int  # not spent yet
    until: float  # when the unspent ones lapse
    grows: bool = True  # False after the store refused a lease: one token at a time


class RateLeases:
    """Leases by key (a principal of a role in a tenant), the least recently used dropped past
    `max_keys`. Used from the event loop only."""

    def __init__(self, *, max_keys: int, clock: Clock) -> None:
        self._max_keys, self._clock = max_keys, clock
        self._leases: OrderedDict[str, _Lease] = OrderedDict()

    def spend(self, key: str) -> bool:
        """Spends one leased token of `key`; False when it holds none that has not lapsed."""
        lease = self._leases.get(key)
        if lease is None or lease.left <= 0 or self._clock() >= lease.until:
            return False
        lease.left -= 1
        self._leases.move_to_end(key)
        return True

    def next_size(self, key: str, cap: int) -> int:
        """How many tokens the next lease of `key` should take (at most `cap`): twice the last
        one when it was spent before it lapsed, what was spent of it when it lapsed (within a
        lease period), else 1."""
        lease = self._leases.get(key)
        now = self._clock()
        if lease is None or now >= lease.until + LEASE_S:
            return 1
        if now >= lease.until:
            return max(1, min(cap, lease.size - lease.left))
        if not lease.grows:
            return 1
        return max(1, min(cap, 2 * lease.size))

    def grant(self, key: str, size: int, *, grows: bool = True) -> None:
        """A lease of `size` tokens taken now, one of them spent by the request that took it;
        `grows=False`: the store refused a larger one, so the next ones take one token until
        this one lapses."""
        self._leases[key] = _Lease(size, size - 1, self._clock() + LEASE_S, grows)
        self._leases.move_to_end(key)
        if len(self._leases) > self._max_keys:
            self._leases.popitem(last=False)

    def drop(self, key: str) -> None:
        """Forgets `key`'s lease: its next request asks the store for one token."""
        self._leases.pop(key, None)


class Refusals:
    """Keys the shared store refused a single token, until the time it said to wait: no token
    of theirs comes back before (a refusal counts nothing, and nothing returns a token), so
    answering 429 here until then is what the store would answer, without asking it."""

    def __init__(self, *, max_keys: int, clock: Clock) -> None:
        self._max_keys, self._clock = max_keys, clock
        self._until: OrderedDict[str, float] = OrderedDict()

    def refuse(self, key: str, wait_s: float) -> None:
        self._until[key] = self._clock() + wait_s
        self._until.move_to_end(key)
        if len(self._until) > self._max_keys:
            self._until.popitem(last=False)

    def wait_s(self, key: str) -> float:
        """Seconds left of `key`'s refusal (0: none)."""
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return 0.0
        return left


class ClearAddresses:
    """Addresses found clear of failed authentications, each for `ADDRESS_CLEAR_S`."""

    def __init__(self, *, max_keys: int, clock: Clock) -> None:
        self._clear: TTLCache[str, bool] = TTLCache(max_keys, ADDRESS_CLEAR_S, timer=clock)

    def __contains__(self, address: str) -> bool:
        return address in self._clear

    def found_clear(self, address: str) -> None:
        self._clear[address] = True

    def failed(self, address: str) -> None:
        """A failure of `address` counted: the next request from it asks the store again."""
        self._clear.pop(address, None)
