"""Rate limits of the HTTP API: token buckets per principal, per tenant and, for failed
authentications, per client address (settings: `RateLimitSettings`).

Buckets live in this process only. `get_principal` (`deps`) asks the limiter right after the
token is verified, so a limited request costs one signature check and never reaches a store.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from factledger.api.http.errors import RateLimitedError
from factledger.api.settings import RateLimitSettings

log = structlog.get_logger(__name__)
Monotonic = Callable[[], float]


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """One bucket per key: `burst` tokens, refilled at `per_s`; thread-safe (FastAPI runs
    sync dependencies in a thread pool). At most `max_keys` buckets are kept: the least
    recently used is dropped, and a dropped key starts full again."""

    def __init__(self, per_s: float, burst: int, *, max_keys: int, clock: Monotonic) -> None:
        self._per_s, self._burst, self._max_keys, self._clock = per_s, burst, max_keys, clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def wait_s(self, key: str) -> float:
        """Seconds until `key` has a token (0 when it has one now); takes nothing."""
        with self._lock:
            return self._wait(self._refilled(key))

    def take(self, key: str) -> float:
        """Takes a token and returns 0, or returns the seconds until one is available."""
        with self._lock:
            bucket = self._refilled(key)
            wait = self._wait(bucket)
            if wait == 0:
                bucket.tokens -= 1
            return wait

    def _wait(self, bucket: _Bucket) -> float:
        return 0.0 if bucket.tokens >= 1 else (1 - bucket.tokens) / self._per_s

    def _refilled(self, key: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(self._burst), now)
            if len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            elapsed = max(now - bucket.updated, 0.0)
            bucket.tokens = min(self._burst, bucket.tokens + elapsed * self._per_s)
            bucket.updated = now
        return bucket


def _retry_after(wait_s: float) -> int:
    return max(1, math.ceil(wait_s))


class RateLimiter:
    """Admits a verified principal, and remembers failed authentications per address."""

    def __init__(self, settings: RateLimitSettings, *, clock: Monotonic = time.monotonic) -> None:
        keep = settings.max_tracked
        self._principals = TokenBuckets(
            settings.principal_per_s, settings.principal_burst, max_keys=keep, clock=clock
        )
        self._tenants = TokenBuckets(
            settings.tenant_per_s, settings.tenant_burst, max_keys=keep, clock=clock
        )
        self._failures = TokenBuckets(
            settings.failed_auth_per_s, settings.failed_auth_burst, max_keys=keep, clock=clock
        )

    def admit(self, tenant: str, principal_id: str) -> None:
        """Takes one request from the principal's and the tenant's buckets, or raises
        `RateLimitedError`. A principal over its own limit spends none of its tenant's."""
        principal_wait = self._principals.take(f"{tenant}\x1f{principal_id}")
        if principal_wait:
            log.info("api.rate_limited", limit="principal", tenant=tenant)
            raise RateLimitedError("principal", _retry_after(principal_wait))
        tenant_wait = self._tenants.take(tenant)
        if tenant_wait:
            log.info("api.rate_limited", limit="tenant", tenant=tenant)
            raise RateLimitedError("tenant", _retry_after(tenant_wait))

    def check_address(self, address: str) -> None:
        """Raises `RateLimitedError` while `address` has used up its failed authentications."""
        wait = self._failures.wait_s(address)
        if wait:
            log.info("api.rate_limited", limit="failed_authentication")
            raise RateLimitedError("failed_authentication", _retry_after(wait))

    def failed(self, address: str) -> None:
        """Counts one failed authentication from `address`."""
        self._failures.take(address)
