"""The services part: short-term memory, recall, the sync store and the sync worker.

- `recall_policies(settings.recall)`: the deployment policy and per-tenant overrides.
- `open_services(runtime, settings, postgres, stack, ...)`: opens the session buffer and the
  sync store, builds `ShortTermMemory`, `Recall` and a `SyncWorker` over the runtime's ledger
  and backend (with the product's model, which proposes from every recorded session), and
  returns the runtime with them; it can also run the worker in-process until
  `stack` closes (`Needs.run_sync`; by default with the in-memory sync store, while with the
  PostgreSQL store `factledger worker` processes run it).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import replace

from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.api.bootstrap.backend import build_extractor, question_reader
from factledger.api.bootstrap.background import run_until_closed
from factledger.api.bootstrap.guidance import guidance_catalogue, guidance_routes
from factledger.api.bootstrap.http_client import ClientOnDemand
from factledger.api.bootstrap.judgement import (
    answer_judge,
    safety_screens,
    tentative_reader,
)
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.proposals import build_proposer
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.settings import (
    InMemorySessionBufferSettings,
    InMemorySyncStoreSettings,
    PostgresEventStoreSettings,
    PostgresSessionBufferSettings,
    PostgresSyncStoreSettings,
    RecallSettings,
    Settings,
    SqliteSessionBufferSettings,
)
from factledger.application.clocks import Clock
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.others import JudgedMemoryStatements
from factledger.application.recall.policy import RecallPolicies, policy_of
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.application.review.proposer import SessionProposer
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.switch import MemorySwitch
from factledger.application.sync.wakeup import Wakeup
from factledger.application.sync.worker import SyncOptions, SyncPorts, SyncWorker


def recall_policies(settings: RecallSettings) -> RecallPolicies:
    """The deployment policy and each tenant's (already merged and validated by settings)."""
    tenants = {tenant: policy_of(policy) for tenant, policy in settings.tenants.items()}
    return RecallPolicies(default=policy_of(settings), tenants=tenants)


async def open_session_buffer(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> SessionBuffer:
    match settings.short_term:
        case InMemorySessionBufferSettings():
            return InMemorySessionBuffer()
        case SqliteSessionBufferSettings(path=path):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            sqlite = SqliteSessionBuffer(path or settings.data_dir / "short_term.sqlite")
            stack.callback(sqlite.close)
            return sqlite
        case PostgresSessionBufferSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.event_store import ensure_schema
            from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer

            location = postgres.location()
            ensure_schema(location, schema, pool=postgres.pool())
            pg = await PostgresSessionBuffer.connect(
                location.conninfo, schema=schema, pool=postgres.pool()
            )
            stack.push_async_callback(pg.close)
            return pg


async def open_sync_store(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack
) -> SyncStore:
    match settings.sync.store:
        case InMemorySyncStoreSettings():
            return InMemorySyncStore()
        case PostgresSyncStoreSettings(schema_name=schema):
            from factledger.adapters.postgres.event_store import ensure_schema
            from factledger.adapters.postgres.sync_store import PostgresSyncStore

            location = postgres.location()
            ensure_schema(location, schema, pool=postgres.pool())
            store = await PostgresSyncStore.connect(
                location.conninfo, schema=schema, pool=postgres.pool()
            )
            stack.push_async_callback(store.close)
            return store


def sync_ports(
    settings: Settings,
    store: SyncStore,
    feed: LedgerEventFeed,
    backend: MemoryBackend,
    proposer: SessionProposer | None = None,
    judge: SentenceJudge | None = None,
) -> SyncPorts:
    """The worker's ports; memory switched off (deployment-wide or per tenant, in the recall
    settings) makes it skip that tenant's writes. With a `proposer`, it also runs the model's
    review of every recorded session (`application.proposals`); with a `judge`, requests to
    forget said in a session never reach the backend."""
    switch = MemorySwitch(recall_policies(settings.recall), feed)
    return SyncPorts(store, feed, feed, backend, switch, proposer, judge)


async def open_proposer(
    settings: Settings,
    ledger: Ledger,
    stack: AsyncExitStack,
    judge: SentenceJudge | None = None,
) -> SessionProposer:
    """The product's model over the configured extractor (the LLM one calls through an HTTP
    client closed with `stack`); `judge` notices requests to forget."""
    routes = guidance_routes(settings.extraction)
    extractor = build_extractor(settings.extractor, ClientOnDemand(stack), routes)
    return build_proposer(settings, ledger, extractor, judge=judge)


def sync_options(settings: Settings) -> SyncOptions:
    s = settings.sync
    return SyncOptions(
        s.batch_size, s.lease_s, s.backoff_s, s.poll_interval_s, s.concurrency, s.max_outage_wait_s
    )


async def open_services(
    runtime: Runtime,
    settings: Settings,
    postgres: PostgresServer,
    stack: AsyncExitStack,
    *,
    clock: Clock,
    needs: Needs,
    embedder: Embedder | None = None,
) -> Runtime:
    """The runtime with its services (short-term memory if `needs.sessions`), closed by
    `stack`; with `needs.run_sync` the worker runs on this event loop until then. Recall
    reads which field a question asks about over the backend's `embedder`, when given."""
    ledger, backend = runtime.ledger, runtime.backend
    buffer = await open_session_buffer(settings, postgres, stack) if needs.sessions else None
    store = await open_sync_store(settings, postgres, stack)
    short_term = None
    judge = answer_judge(settings.extractor, settings.extraction)
    screens = safety_screens(runtime.safety, judge, settings.safety)
    ledger.tentative = tentative_reader(judge)
    if buffer is not None:
        recorder = LedgerSessionRecorder(ledger)
        short_term = ShortTermMemory(
            SessionPorts(
                buffer,
                screens.messages,
                recorder,
                clock,
                guidance_catalogue(settings),
            )
        )
    policies = recall_policies(settings.recall)
    sources = LedgerRecallSources(ledger, clock=clock)
    forgets = LedgerForgets(ledger)
    turns = LedgerTurns(ledger, forgets, clock=clock)
    asked = question_reader(settings, embedder if backend is not None else None)
    # The extractor's statement head reads whom a memory speaks of, where a policy asks.
    statements = None if judge is None else JudgedMemoryStatements(judge)
    recall = Recall(
        RecallPorts(
            backend,
            sources,
            policies,
            forgets=forgets,
            turns=turns,
            asked_fields=asked,
            statements=statements,
        )
    )
    worker = None
    if backend is not None:
        feed = LedgerEventFeed(ledger)
        proposer = await open_proposer(settings, ledger, stack, judge)
        ports = sync_ports(settings, store, feed, backend, proposer, judge)
        in_process = isinstance(settings.sync.store, InMemorySyncStoreSettings)
        runs_here = needs.run_sync if needs.run_sync is not None else in_process
        channel = commit_channel_of(settings, ledger)
        listens = channel is not None and (runs_here or needs.listen_for_commits)
        wakeup = Wakeup() if runs_here or listens else None
        options = sync_options(settings)
        if runs_here:
            # In an API process items go one at a time: side by side they took the event loop
            # from the requests (session ends 45/s against 70/s, docs/benchmarks.md).
            options = replace(options, concurrency=1)
        worker = SyncWorker(ports, options, wakeup=wakeup)
        if wakeup is not None:
            ledger.after_commit.append(wakeup.notify)
        if wakeup is not None and channel is not None and listens:
            listen_for_commits(postgres, channel, wakeup, stack)
        if runs_here:
            run_until_closed(worker.run_forever, stack)
    return replace(
        runtime,
        sessions=short_term,
        session_buffer=buffer,
        recall=recall,
        sync_store=store,
        sync_worker=worker,
        judge=judge,
        safety=screens.fields,
    )


def commit_channel_of(settings: Settings, ledger: Ledger) -> str | None:
    """The channel a PostgreSQL ledger notifies of its commits (None for another store)."""
    if not isinstance(settings.event_store, PostgresEventStoreSettings):
        return None
    # Imported here: a start with no PostgreSQL store never imports the driver.
    from factledger.adapters.postgres.event_store import commit_channel

    return commit_channel(ledger.recorder)


def listen_for_commits(
    postgres: PostgresServer, channel: str, wakeup: Wakeup, stack: AsyncExitStack
) -> None:
    """Until `stack` closes, commits of other processes (PostgreSQL's NOTIFY in the events'
    transaction) wake the worker, on a connection of its own."""
    from factledger.adapters.postgres.commit_listener import CommitListener, start_listening

    listener = CommitListener(
        postgres.location().conninfo,
        channel,
        wakeup.notify,
        connect_kwargs=postgres.pool().connection_kwargs(autocommit=True),
    )
    stack.push_async_callback(start_listening(listener))
