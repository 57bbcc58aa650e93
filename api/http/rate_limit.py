"""Rate limits of the HTTP API, per principal (by its token's role), per tenant and, for failed
authentications, per client address (settings: `RateLimitSettings`).

The counts live in a store every API process shares (`application.rate_limits.RateStore`:
a PostgreSQL table or a SQLite file beside the event store), so a deployment's limit holds
whatever the number of processes. While that store fails or is slower than
`SHARED_WITHIN_S`, each process counts on its own for `LOCAL_FOR_S`, rather than refusing
everything or making every request wait for it. `get_principal` (`deps`) asks the limiter right
after the token is verified, so a limited request costs one signature check and a count, and
never reaches another store.

The shared store is not asked on every request (`rate_leases`, ADR 0096): a principal's
requests are admitted from a lease of tokens of its limit and its tenant's taken in one round
trip, and an address found clear of failed authentications is not asked about again for a
second unless this process counts a failure of it; the bounds this costs are in `rate_leases`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import structlog

from factledger.api.http.errors import RateLimitedError
from factledger.api.http.rate_leases import ClearAddresses, RateLeases, Refusals, lease_cap
from factledger.api.settings import RateLimitSettings
from factledger.application.rate_limits import Clock, InProcessRateStore, Rate, RateStore

log = structlog.get_logger(__name__)
# A count in the shared store answers within this, or the process counts on its own.
SHARED_WITHIN_S = 0.5
# How long a process counts on its own after the shared store failed it, before trying again.
LOCAL_FOR_S = 1.0
_SEP = "\x1f"
T = TypeVar("T")


def _retry_after(wait_s: float) -> int:
    return max(1, math.ceil(wait_s))


class RateLimiter:
    """Admits a verified principal, and remembers failed authentications per address."""

    def __init__(self, settings: RateLimitSettings, *, clock: Clock = time.monotonic) -> None:
        self._settings = settings
        self._tenant = Rate(settings.tenant_per_s, settings.tenant_burst)
        self._failures = Rate(settings.failed_auth_per_s, settings.failed_auth_burst)
        self._local = InProcessRateStore(max_keys=settings.max_tracked, clock=clock)
        self._leases = RateLeases(max_keys=settings.max_tracked, clock=clock)
        self._clear = ClearAddresses(max_keys=settings.max_tracked, clock=clock)
        self._refusals = Refusals(max_keys=settings.max_tracked, clock=clock)
        self._shared: RateStore | None = None
        self._local_until = 0.0
        # Counts that outlived their wait: cancelled, never awaited (a driver may take seconds
        # to give up on a stalled server), kept until they end so that they are not collected.
        self._abandoned: set[asyncio.Future[Any]] = set()

    def share(self, store: RateStore | None) -> None:
        """Counts in `store` from now on (None: in this process only)."""
        self._shared = store

    def principal_rate(self, role: str) -> Rate:
        rate = self._settings.role_rate(role)
        return Rate(rate.per_s, rate.burst)

    async def admit(self, tenant: str, principal_id: str, role: str) -> None:
        """Counts one request against the principal's and the tenant's limits, or raises
        `RateLimitedError`. A principal over its own limit spends none of its tenant's."""
        principal = (_SEP.join(("principal", tenant, principal_id)), self.principal_rate(role))
        tenant_limit = (_SEP.join(("tenant", tenant)), self._tenant)
        shared = self._shared_now()
        found = None
        if shared is not None:
            lease = _SEP.join((principal[0], role))
            if self._leases.spend(lease):
                return
            found = (self._refusals.wait_s(principal[0]), self._refusals.wait_s(tenant_limit[0]))
            if found == (0.0, 0.0):
                found = await self._leased(shared, lease, principal, tenant_limit)
        principal_wait, tenant_wait = found or self._local.take_then_now(principal, tenant_limit)
        if principal_wait:
            log.info("api.rate_limited", limit="principal", tenant=tenant, role=role)
            raise RateLimitedError("principal", _retry_after(principal_wait))
        if tenant_wait:
            log.info("api.rate_limited", limit="tenant", tenant=tenant)
            raise RateLimitedError("tenant", _retry_after(tenant_wait))

    async def _leased(
        self, shared: RateStore, lease: str, principal: tuple[str, Rate], tenant: tuple[str, Rate]
    ) -> tuple[float, float] | None:
        """Takes a lease of both limits' tokens in one round trip, one of them for this
        request; a key with fewer left than the lease asks for is asked for one token, as
        without leases. None when the store failed (the caller counts locally)."""
        (principal_key, principal_rate), (tenant_key, tenant_rate) = principal, tenant
        size = self._leases.next_size(lease, min(lease_cap(principal_rate), lease_cap(tenant_rate)))
        found = await self._bounded(
            shared.take_then(
                (principal_key, principal_rate.times(size)), (tenant_key, tenant_rate.times(size))
            )
        )
        if found == (0.0, 0.0):
            self._leases.grant(lease, size)
            return found
        if found is None:
            return None
        self._leases.drop(lease)
        if size > 1:
            found = await self._bounded(shared.take_then(principal, tenant))
            if found == (0.0, 0.0):
                self._leases.grant(lease, 1, grows=False)
            if found is None or found == (0.0, 0.0):
                return found
        # Refused a single token: no token of the key comes back before its wait is over.
        for key, wait in zip((principal_key, tenant_key), found, strict=True):
            if wait:
                self._refusals.refuse(key, wait)
        return found

    async def check_address(self, address: str) -> None:
        """Raises `RateLimitedError` while `address` has used up its failed authentications;
        an address found clear within `ADDRESS_CLEAR_S`, with no failure counted here since,
        is not asked about again."""
        if address in self._clear:
            return
        wait = await self._wait(_SEP.join(("address", address)), self._failures)
        if wait:
            log.info("api.rate_limited", limit="failed_authentication")
            raise RateLimitedError("failed_authentication", _retry_after(wait))
        self._clear.found_clear(address)

    async def failed(self, address: str) -> None:
        """Counts one failed authentication from `address`."""
        self._clear.failed(address)
        await self._take(_SEP.join(("address", address)), self._failures)

    async def _take(self, key: str, rate: Rate) -> float:
        shared = self._shared_now()
        if shared is not None:
            found = await self._bounded(shared.take(key, rate))
            if found is not None:
                return found
        return self._local.take_now(key, rate)

    async def _wait(self, key: str, rate: Rate) -> float:
        shared = self._shared_now()
        if shared is not None:
            found = await self._bounded(shared.wait_s(key, rate))
            if found is not None:
                return found
        return self._local.wait_now(key, rate)

    def _shared_now(self) -> RateStore | None:
        if self._shared is None or time.monotonic() < self._local_until:
            return None
        return self._shared

    async def _bounded(self, count: Awaitable[T]) -> T | None:
        """The shared store's answer, or None (and local counting for a while) when it
        failed or did not answer within `SHARED_WITHIN_S`."""
        task = asyncio.ensure_future(count)
        await asyncio.wait({task}, timeout=SHARED_WITHIN_S)
        if task.done() and task.exception() is None:
            return task.result()
        error_type = "TimeoutError" if not task.done() else type(task.exception()).__name__
        if not task.done():
            task.cancel()
            self._abandon(task)
        if time.monotonic() >= self._local_until:
            log.warning("api.rate_limits_local", error_type=error_type, for_s=LOCAL_FOR_S)
        self._local_until = time.monotonic() + LOCAL_FOR_S
        return None

    def _abandon(self, task: asyncio.Future[Any]) -> None:
        self._abandoned.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Future[Any]) -> None:
        self._abandoned.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the request was answered without it
