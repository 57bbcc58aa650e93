"""Composition of short-term memory, recall and the sync worker (called from `bootstrap`).

- `recall_policies(settings.recall)`: the deployment policy and per-tenant overrides.
- `open_memory_services(settings, ledger, backend, clock=...)`: an async context manager that
  opens the session buffer and the sync store, builds `ShortTermMemory`, `Recall` and a
  `SyncWorker`; with the in-memory sync store it also runs the worker in-process until exit.
  With the PostgreSQL store, run `factledger worker` processes instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from factledger.adapters.extraction.safety_filter import RuleBasedSafetyFilter
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.postgres.event_store import ensure_schema
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.api.settings import (
    InMemorySessionBufferSettings,
    InMemorySyncStoreSettings,
    PostgresSessionBufferSettings,
    PostgresSyncStoreSettings,
    RecallSettings,
    Settings,
    SqliteSessionBufferSettings,
)
from factledger.application.clocks import SystemClock
from factledger.application.ledger.idempotency import IdempotencyStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.ports import Clock, MemoryBackend, SessionBuffer
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.policy import RecallPolicies, policy_of
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.switch import MemorySwitch
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker
from factledger.projections.follower import Follower
from factledger.projections.profile_reader import ViewStoreProfileReader


@dataclass(frozen=True, slots=True)
class MemoryServices:
    """What the API and the worker use beyond the ledger."""

    sessions: ShortTermMemory
    session_buffer: SessionBuffer
    recall: Recall
    sync_store: SyncStore
    sync_worker: SyncWorker | None  # None without a memory backend
    backend: MemoryBackend | None


@dataclass(frozen=True, slots=True)
class ServiceRuntime:
    """What `bootstrap` yields: the ledger runtime's parts plus the memory services."""

    ledger: Ledger
    reader: ViewStoreProfileReader
    follower: Follower
    sessions: ShortTermMemory
    session_buffer: SessionBuffer
    recall: Recall
    sync_store: SyncStore
    backend: MemoryBackend | None
    idempotency: IdempotencyStore | None = None  # set by `api.bootstrap`

    @classmethod
    def of(
        cls, ledger: Ledger, reader: ViewStoreProfileReader, follower: Follower, s: MemoryServices
    ) -> ServiceRuntime:
        return cls(
            ledger,
            reader,
            follower,
            s.sessions,
            s.session_buffer,
            s.recall,
            s.sync_store,
            s.backend,
        )


def recall_policies(settings: RecallSettings) -> RecallPolicies:
    """The deployment policy and each tenant's (already merged and validated by settings)."""
    tenants = {tenant: policy_of(policy) for tenant, policy in settings.tenants.items()}
    return RecallPolicies(default=policy_of(settings), tenants=tenants)


def postgres_location(settings: Settings, stack: AsyncExitStack) -> PostgresLocation:
    """`DATABASE_URL`, else the embedded server under `<data_dir>/pg`."""
    if settings.database_url is not None:
        return PostgresLocation.from_url(settings.database_url.get_secret_value())
    server = EmbeddedPostgres(settings.data_dir / "pg", delete_on_stop=False)
    stack.callback(server.stop)
    return server.location


async def open_session_buffer(settings: Settings, stack: AsyncExitStack) -> SessionBuffer:
    match settings.short_term:
        case InMemorySessionBufferSettings():
            return InMemorySessionBuffer()
        case SqliteSessionBufferSettings(path=path):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteSessionBuffer(path or settings.data_dir / "short_term.sqlite")
            stack.callback(sqlite.close)
            return sqlite
        case PostgresSessionBufferSettings(schema_name=schema):
            location = postgres_location(settings, stack)
            ensure_schema(location, schema)
            pg = await PostgresSessionBuffer.connect(location.conninfo, schema=schema)
            stack.push_async_callback(pg.close)
            return pg


async def open_sync_store(settings: Settings, stack: AsyncExitStack) -> SyncStore:
    match settings.sync.store:
        case InMemorySyncStoreSettings():
            return InMemorySyncStore()
        case PostgresSyncStoreSettings(schema_name=schema):
            location = postgres_location(settings, stack)
            ensure_schema(location, schema)
            store = await PostgresSyncStore.connect(location.conninfo, schema=schema)
            stack.push_async_callback(store.close)
            return store


def sync_ports(
    settings: Settings, store: SyncStore, feed: LedgerEventFeed, backend: MemoryBackend
) -> SyncPorts:
    """The worker's ports; memory switched off (deployment-wide or per tenant, in the recall
    settings) makes it skip that tenant's writes."""
    switch = MemorySwitch(recall_policies(settings.recall), feed)
    return SyncPorts(store, feed, feed, backend, switch)


def sync_options(settings: Settings) -> SyncOptions:
    s = settings.sync
    return SyncOptions(s.batch_size, s.lease_s, s.backoff_s, s.poll_interval_s)


@asynccontextmanager
async def open_memory_services(
    settings: Settings,
    ledger: Ledger,
    backend: MemoryBackend | None,
    *,
    clock: Clock | None = None,
    run_worker: bool | None = None,
) -> AsyncIterator[MemoryServices]:
    """Opens everything; `run_worker` defaults to True with the in-memory sync store."""
    clock = clock or SystemClock()
    async with AsyncExitStack() as stack:
        buffer = await open_session_buffer(settings, stack)
        store = await open_sync_store(settings, stack)
        sessions = ShortTermMemory(
            SessionPorts(buffer, RuleBasedSafetyFilter(), LedgerSessionRecorder(ledger), clock)
        )
        policies = recall_policies(settings.recall)
        recall = Recall(RecallPorts(backend, LedgerRecallSources(ledger), policies))
        feed = LedgerEventFeed(ledger)
        worker = None
        if backend is not None:
            worker = SyncWorker(sync_ports(settings, store, feed, backend), sync_options(settings))
        services = MemoryServices(sessions, buffer, recall, store, worker, backend)
        in_process = isinstance(settings.sync.store, InMemorySyncStoreSettings)
        if worker is not None and (run_worker if run_worker is not None else in_process):
            stop = asyncio.Event()
            task = asyncio.create_task(worker.run_forever(stop))

            async def halt() -> None:
                stop.set()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

            stack.push_async_callback(halt)
        yield services
