"""The composition root: `Settings` -> the ledger, its views and the follower that feeds them.

The only module that chooses adapters. Others extend `bootstrap` with the memory backend,
recall and the sync worker; the ledger part is `open_ledger_runtime`:

    with open_ledger_runtime(load_settings()) as rt:
        result = rt.ledger.propose_change(cmd)
        rt.catch_up()                                   # read-your-writes
        rt.reader.current(tenant, result.subject_id)

Resources are opened on enter and closed on exit, in reverse order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, replace

import httpx

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles
from factledger.adapters.embedding.openai_compatible import OpenAICompatibleEmbedder
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.api.bootstrap.backend import open_backend
from factledger.api.bootstrap.idempotency import open_idempotency_store
from factledger.api.bootstrap.services import ServiceRuntime, open_memory_services
from factledger.api.settings import (
    EmbedderSettings,
    HashingEmbedderSettings,
    InMemoryEventStoreSettings,
    InMemoryViewSettings,
    OnnxEmbedderSettings,
    OpenAICompatibleEmbedderSettings,
    PostgresEventStoreSettings,
    PostgresViewSettings,
    Settings,
    SqliteEventStoreSettings,
    SqliteViewSettings,
)
from factledger.application.clocks import SystemClock
from factledger.application.ledger.key_store import InMemoryKeyStore, KeyStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.view_store import ViewStore
from factledger.application.ports import Clock, Embedder, MemoryBackend
from factledger.domain.values import ProfileSchema
from factledger.projections.follower import Follower
from factledger.projections.profile_projection import ProfileProjection
from factledger.projections.profile_reader import ViewStoreProfileReader

PROFILE_PROJECTION = "profile"


@dataclass(frozen=True, slots=True)
class LedgerRuntime:
    """The ledger and its read side, wired."""

    settings: Settings
    ledger: Ledger
    views: ViewStore
    projection: ProfileProjection
    reader: ViewStoreProfileReader
    follower: Follower

    def catch_up(self) -> int:
        """Brings every view up to the head of the log (call after a command to read it)."""
        return self.follower.catch_up()


class _Postgres:
    """Starts the embedded server only if some part needs PostgreSQL and no URL is set."""

    def __init__(self, settings: Settings, stack: ExitStack) -> None:
        self._settings, self._stack = settings, stack
        self._location: PostgresLocation | None = None

    def location(self) -> PostgresLocation:
        if self._location is None:
            url = self._settings.database_url
            if url is not None:
                self._location = PostgresLocation.from_url(url.get_secret_value())
            else:
                server = EmbeddedPostgres(self._settings.data_dir / "pg", delete_on_stop=False)
                self._stack.callback(server.stop)
                self._location = server.location
        return self._location


def event_store_env(settings: Settings, postgres: _Postgres) -> dict[str, str]:
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return popo_env()
        case SqliteEventStoreSettings():
            return sqlite_env(settings.ledger_path())
        case PostgresEventStoreSettings(schema_name=schema):
            return postgres_env(postgres.location(), schema=schema)


def build_key_store(settings: Settings, postgres: _Postgres, stack: ExitStack) -> KeyStore:
    """The deletable keys of the ledger's personal fields (ADR 0003), beside its events."""
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return InMemoryKeyStore()
        case SqliteEventStoreSettings():
            sqlite_keys = SqliteKeyStore(settings.keys_path())
            stack.callback(sqlite_keys.close)
            return sqlite_keys
        case PostgresEventStoreSettings(schema_name=schema):
            pg_keys = PostgresKeyStore(postgres.location().conninfo, schema=schema)
            stack.callback(pg_keys.close)
            return pg_keys


def build_view_store(settings: Settings, postgres: _Postgres, name: str) -> ViewStore:
    match settings.views:
        case InMemoryViewSettings():
            return InMemoryViewStore(name)
        case SqliteViewSettings():
            return SqliteViewStore(settings.views_path(), name)
        case PostgresViewSettings(schema_name=schema):
            return PostgresViewStore(postgres.location().conninfo, name, schema=schema)


def build_embedder(s: EmbedderSettings, http: httpx.AsyncClient) -> Embedder:
    """The embedder of every self-hosted backend; the ONNX model loads once per process."""
    match s:
        case OnnxEmbedderSettings():
            files = (
                OnnxModelFiles.from_directory(s.model_dir, model_sha256=s.model_sha256)
                if s.model_dir is not None
                else OnnxModelFiles.preset(s.model)
            )
            return OnnxEmbedder(
                files,
                max_tokens=s.max_tokens,
                batch_size=s.batch_size,
                threads=s.threads,
                int8_activations=s.int8_activations,
                cache_dir=s.cache_dir,
            )
        case HashingEmbedderSettings():
            return HashingEmbedder(s.dimension)
        case OpenAICompatibleEmbedderSettings():
            return OpenAICompatibleEmbedder(
                http,
                base_url=s.base_url,
                model=s.model,
                dimension=s.dimension,
                api_key=s.api_key.get_secret_value() if s.api_key is not None else None,
                batch_size=s.batch_size,
                timeout_s=s.timeout_s,
                max_retries=s.max_retries,
            )


async def open_configured_backend(
    settings: Settings, clock: Clock, stack: AsyncExitStack
) -> MemoryBackend:
    """The configured embedder and memory backend, sharing one HTTP client; all three are
    closed when `stack` closes."""
    http = httpx.AsyncClient()
    stack.push_async_callback(http.aclose)
    embedder = build_embedder(settings.embedder, http)
    return await open_backend(settings, embedder, clock, stack, http=http)


@contextmanager
def open_ledger_runtime(
    settings: Settings, *, clock: Clock | None = None, catch_up: bool = True
) -> Iterator[LedgerRuntime]:
    """Opens the ledger and its views and (by default) catches the views up with the log."""
    with ExitStack() as stack:
        postgres = _Postgres(settings, stack)
        keys = build_key_store(settings, postgres, stack)
        schemas = {kind: ProfileSchema(fields) for kind, fields in settings.profile_schemas.items()}
        ledger = Ledger(
            event_store_env(settings, postgres), clock=clock, keys=keys, schemas=schemas
        )
        stack.callback(ledger.close)
        views = build_view_store(settings, postgres, PROFILE_PROJECTION)
        stack.callback(views.close)
        projection = ProfileProjection(views)
        runtime = LedgerRuntime(
            settings=settings,
            ledger=ledger,
            views=views,
            projection=projection,
            reader=ViewStoreProfileReader(views),
            follower=Follower(ledger, [projection]),
        )
        if catch_up:
            runtime.catch_up()
        yield runtime


@asynccontextmanager
async def bootstrap(
    settings: Settings, *, clock: Clock | None = None
) -> AsyncIterator[ServiceRuntime]:
    """The async composition root for the HTTP app: the ledger runtime, the configured memory
    backend, short-term memory, recall and the sync (run in-process with the in-memory sync
    store; by `factledger worker` processes with PostgreSQL)."""
    with open_ledger_runtime(settings, clock=clock) as runtime:
        async with AsyncExitStack() as stack:
            now = clock or SystemClock()
            backend = await open_configured_backend(settings, now, stack)
            services = await stack.enter_async_context(
                open_memory_services(settings, runtime.ledger, backend, clock=now)
            )
            idempotency = await open_idempotency_store(settings, stack)
            parts = ServiceRuntime.of(runtime.ledger, runtime.reader, runtime.follower, services)
            yield replace(parts, idempotency=idempotency)
