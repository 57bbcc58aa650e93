"""The entries of the composition root: `Settings` -> a `Runtime`, opened and closed as one.

    async with open_runtime(load_settings()) as rt:           # the HTTP app: every part
        ...
    async with open_runtime(settings, WORKER) as rt:          # `factledger worker`
        await rt.sync_worker.run_once()
    with open_ledger_runtime(settings) as rt:                 # ledger commands (no event loop)
        rt.ledger.propose_change(cmd)
        rt.catch_up()                                         # read-your-writes
        rt.profiles.current(tenant, subject_id)

Each entry owns one `PostgresServer`: entered first, so it is closed last, after every part
that uses it. Parts are closed in reverse order of opening: the in-process sync worker stops
before the stores and the backend it writes through, and those before the ledger.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import replace

import structlog

from factledger.api.bootstrap.backend import begin_backend, open_configured_backend
from factledger.api.bootstrap.background import run_until_closed
from factledger.api.bootstrap.idempotency import open_idempotency_store
from factledger.api.bootstrap.importing import open_import_positions
from factledger.api.bootstrap.ledger import open_ledger
from factledger.api.bootstrap.migrations_ahead import start_migrations_ahead
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.rate_limits import open_rate_store
from factledger.api.bootstrap.runtime import API, Needs, Runtime
from factledger.api.bootstrap.services import open_services, open_sync_store
from factledger.api.bootstrap.warmup import schedule_fallback
from factledger.api.settings import Settings
from factledger.application.clocks import Clock, SystemClock
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.forget_sweep import finish_forgetting_forever
from factledger.application.memory.ports import MemoryBackend
from factledger.application.sync.ports import SyncStore
from factledger.projections.live import LiveViews

log = structlog.get_logger(__name__)
FIRST_RETRY_S, LONGEST_RETRY_S = 0.25, 5.0


@contextmanager
def open_ledger_runtime(
    settings: Settings, *, clock: Clock | None = None, catch_up: bool = True
) -> Iterator[Runtime]:
    """The ledger and its views only, for commands without an event loop; the views are
    caught up with the log on open unless `catch_up` is False."""
    with (
        PostgresServer(settings) as postgres,
        open_ledger(settings, postgres, clock=clock, catch_up=catch_up) as runtime,
    ):
        yield runtime


@asynccontextmanager
async def open_runtime(
    settings: Settings, needs: Needs = API, *, clock: Clock | None = None
) -> AsyncIterator[Runtime]:
    """The ledger, its views and the parts in `needs`: the configured memory backend,
    short-term memory, recall, the sync, the idempotency store and the import positions."""
    now = clock or SystemClock()
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))
        # A new database's PostgreSQL stores migrate side by side while the ledger opens.
        ahead = start_migrations_ahead(settings, postgres, needs)
        if ahead is not None:
            stack.callback(ahead.discard)
        # The backend's too (pgvector's), which need the embedder's dimension.
        begun = (
            begin_backend(settings, postgres, stack, migrate_ahead=True) if needs.backend else None
        )
        runtime = stack.enter_context(
            open_ledger(settings, postgres, clock=clock, catch_up=needs.catch_up)
        )
        if begun is not None:
            backend = await open_configured_backend(settings, now, postgres, stack, begun)
            runtime = replace(runtime, backend=backend)
        embedder = None if begun is None else begun.embedder
        runtime = await open_services(
            runtime, settings, postgres, stack, clock=now, needs=needs, embedder=embedder
        )
        if needs.live_views:
            live = LiveViews(runtime.follower)
            runtime.ledger.after_commit.append(live.wake)
            live.start()
            stack.callback(live.stop)
        if needs.idempotency:
            idempotency = await open_idempotency_store(settings, postgres, stack)
            runtime = replace(runtime, idempotency=idempotency)
            # The processes that answer retries from saved responses finish the forgets
            # such a retry cannot.
            ledger = runtime.ledger
            run_until_closed(lambda stop: finish_forgetting_forever(ledger, stop), stack)
        if needs.imports:
            imports = await open_import_positions(settings, postgres, stack)
            runtime = replace(runtime, imports=imports)
        if needs.rate_limits:
            rate_store = await open_rate_store(settings, postgres, stack)
            runtime = replace(runtime, rate_store=rate_store)
        standby = postgres.read_location()
        if standby is not None:
            # Imported here: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.replay_position import ReplayPositions

            replay = ReplayPositions(
                postgres.location().conninfo, standby.conninfo, pool=postgres.pool()
            )
            await replay.open()
            stack.push_async_callback(replay.close)
            runtime = replace(runtime, replay=replay)
        if ahead is not None:
            ahead.discard()  # every store has opened: no later open trusts these results
        yield runtime


@asynccontextmanager
async def open_runtime_patiently(
    settings: Settings,
    needs: Needs = API,
    *,
    wait_s: float | None = None,
    warm_up_fallback: bool = True,
) -> AsyncIterator[Runtime]:
    """`open_runtime` for a process that starts on its own (`serve`'s workers, `worker`):
    a store that is away (its database restarting) is tried again, with growing pauses,
    for `wait_s` (`api.startup_wait_s`) before the startup fails. Under `serve --workers N`
    a worker whose startup fails stops the whole server, the workers that serve included.
    Without `warm_up_fallback` the caller starts the warm-up itself (a served app, after its
    routes: `api.http.routes.health.after_ready`)."""
    patience = settings.api.startup_wait_s if wait_s is None else wait_s
    deadline = time.monotonic() + patience
    pause = FIRST_RETRY_S
    async with AsyncExitStack() as stack:
        while True:
            try:
                # A failed entry closed what it had opened; nothing is left on the stack.
                runtime = await stack.enter_async_context(open_runtime(settings, needs))
            except StoreUnavailableError as exc:
                if time.monotonic() + pause > deadline:
                    raise
                log.warning(
                    "runtime.store_unavailable_at_start",
                    error_type=type(exc).__name__,
                    cause_type=type(exc.__cause__).__name__,
                    retry_in_s=pause,
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_RETRY_S)
                continue
            break
        # Ready. The models deferred so far (the embedders') and the libraries a start does
        # not import load on threads once the first `/readyz` has been answered (the route
        # starts them), or shortly after this if nothing asks (`api/bootstrap/warmup.py`).
        if warm_up_fallback:
            fallback = schedule_fallback()
            stack.callback(fallback.cancel)
        yield runtime


@asynccontextmanager
async def open_memory_backend(
    settings: Settings, *, clock: Clock | None = None
) -> AsyncIterator[MemoryBackend]:
    """The configured memory backend alone, for operator commands that need nothing else."""
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))
        yield await open_configured_backend(settings, clock or SystemClock(), postgres, stack)


@asynccontextmanager
async def open_sync_queue(settings: Settings) -> AsyncIterator[SyncStore]:
    """The sync store alone (the dead-letter commands)."""
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))
        yield await open_sync_store(settings, postgres, stack)
