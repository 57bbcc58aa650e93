"""Readiness: each store the process serves from answers a cheap read within a bound.

`/readyz` is what a load balancer or orchestrator asks before routing traffic: a process whose
event store, views, keys, short-term memory or sync queue cannot be reached is not ready, and
the answer names the failing dependencies. Liveness (`/healthz`) never touches them: a process
waiting out a database restart is alive and heals by itself (ADR 0013).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from uuid import UUID

import structlog

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.projections.follower import max_position

log = structlog.get_logger(__name__)

# One check waits at most this long: a probe must answer well within an orchestrator's timeout.
CHECK_TIMEOUT_S = 2.0
# Ids no caller uses: the probes read nothing that exists.
PROBE_ID = "factledger-readiness-probe"
PROBE_SUBJECT = UUID(int=0)

Check = Callable[[], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Readiness:
    checks: dict[str, str]

    @property
    def failing(self) -> list[str]:
        return sorted(name for name, state in self.checks.items() if state != "ok")

    @property
    def ready(self) -> bool:
        return not self.failing


def store_checks(ports: Runtime) -> dict[str, Check]:
    """A read per store of `ports` (the memory backend is reported apart: recall degrades)."""
    checks: dict[str, Check] = {
        "ledger": lambda: asyncio.to_thread(max_position, ports.ledger),
        "views": lambda: asyncio.to_thread(ports.views.position),
        "keys": lambda: asyncio.to_thread(ports.ledger.keys.key, PROBE_ID),
    }
    buffer, sync_store = ports.session_buffer, ports.sync_store
    if buffer is not None:
        checks["short_term"] = lambda: buffer.get(SessionKey(PROBE_SUBJECT, SessionId(PROBE_ID)))
    if sync_store is not None:
        checks["sync_store"] = sync_store.position
    return checks


async def _state_of(name: str, check: Check, timeout_s: float) -> str:
    try:
        await asyncio.wait_for(check(), timeout=timeout_s)
    except TimeoutError:
        log.warning("api.not_ready", dependency=name, error_type="TimeoutError")
        return "timeout"
    except Exception as exc:  # any failure means "not ready"; its type is logged, not returned
        log.warning("api.not_ready", dependency=name, error_type=type(exc).__name__)
        return "unavailable"
    return "ok"


async def readiness(checks: dict[str, Check], *, timeout_s: float = CHECK_TIMEOUT_S) -> Readiness:
    """Runs every check at once, each bounded by `timeout_s`."""
    names = list(checks)
    states = await asyncio.gather(*(_state_of(n, checks[n], timeout_s) for n in names))
    return Readiness(dict(zip(names, states, strict=True)))
