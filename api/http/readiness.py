"""Readiness: each store the process serves from answers a cheap read within a bound.

`/readyz` is what a load balancer or orchestrator asks before routing traffic: a process whose
event store, views, keys, short-term memory or sync queue cannot be reached is not ready, and
the answer names the failing dependencies. Liveness (`/healthz`) never touches them: a process
waiting out a database restart is alive and heals by itself.
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

# Every check runs at once and waits at most this long, so `/readyz` answers within a second
# whatever is down or stalled: a probe with a 1 s timeout sees a 503, never a hang.
CHECK_TIMEOUT_S = 0.8
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


# Checks still running at the deadline, by name: cancelled, never awaited (a driver may take
# seconds to give up on a stalled server). While one runs, the next probe reports its store as
# `timeout` at once instead of starting another: a stalled store holds at most one thread of
# the process's pool per check, however often the orchestrator asks.
_abandoned: dict[str, asyncio.Future[object]] = {}


def _abandon(name: str, task: asyncio.Future[object]) -> None:
    task.cancel()
    _abandoned[name] = task
    task.add_done_callback(lambda done: _forget(name, done))


def _forget(name: str, task: asyncio.Future[object]) -> None:
    if _abandoned.get(name) is task:
        del _abandoned[name]
    if not task.cancelled():
        task.exception()  # retrieved: a late failure is no news, the probe already answered


def _state_of(name: str, task: asyncio.Future[object] | None) -> str:
    if task is None or not task.done():
        log.warning("api.not_ready", dependency=name, error_type="TimeoutError")
        return "timeout"
    exc = task.exception()
    if exc is not None:  # any failure means "not ready"; its type is logged, not returned
        log.warning("api.not_ready", dependency=name, error_type=type(exc).__name__)
        return "unavailable"
    return "ok"


async def readiness(checks: dict[str, Check], *, timeout_s: float = CHECK_TIMEOUT_S) -> Readiness:
    """Runs every check at once; the answer comes at `timeout_s` at the latest, with the
    checks still running then reported as `timeout` (and left to end on their own)."""
    tasks = {
        name: asyncio.ensure_future(check())
        for name, check in checks.items()
        if name not in _abandoned
    }
    if tasks:
        await asyncio.wait(tasks.values(), timeout=timeout_s)
    states = {name: _state_of(name, tasks.get(name)) for name in checks}
    for name, task in tasks.items():
        if not task.done():
            _abandon(name, task)
    return Readiness(states)
