"""Opening the configured memory backend (`settings.backend`, `settings.embedder`).

Used by `factledger worker` and by `bootstrap` for recall and the sync. Self-hosted backends
extract facts with the configured extractor (`settings.extractor`: the rule-based one by
default); `pgvector` without DSNs uses the server of `database_url` (or the embedded one).
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import httpx

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import server_config
from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.adapters.supermemory.calls import CallPolicy
from factledger.api.bootstrap.extractor import build_extractor
from factledger.api.bootstrap.services import postgres_location
from factledger.api.settings import (
    InMemoryBackendSettings,
    PgvectorBackendSettings,
    Settings,
    SupermemoryBackendSettings,
)
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.application.ports import Clock, Embedder, MemoryBackend


async def open_backend(
    settings: Settings,
    embedder: Embedder,
    clock: Clock,
    stack: AsyncExitStack,
    *,
    http: httpx.AsyncClient | None = None,
) -> MemoryBackend:
    """Opens the configured backend (self-hosted ones embed with `embedder` and extract with
    `settings.extractor`, whose LLM variant calls through `http`; without one, a client is
    opened on `stack`); it is closed when `stack` closes. Every call's inputs are checked by
    `ValidatingMemoryBackend` before they reach the adapter."""
    backend: MemoryBackend
    match settings.backend:
        case InMemoryBackendSettings():
            extractor = build_extractor(settings.extractor, http or await _client(stack))
            backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock)
        case PgvectorBackendSettings() as s:
            server = None if s.dsn is not None else postgres_location(settings, stack)
            config = server_config(
                dsn=None if s.dsn is None else s.dsn.get_secret_value(),
                admin_dsn=None if s.admin_dsn is None else s.admin_dsn.get_secret_value(),
                server=server,
                schema=s.schema_name,
                app_role=s.app_role,
                pool_max=s.pool_size,
            )
            backend = await PgvectorMemoryBackend.open(
                config,
                embedder=embedder,
                extractor=build_extractor(settings.extractor, http or await _client(stack)),
                clock=clock,
            )
        case SupermemoryBackendSettings() as s:
            backend = SupermemoryMemoryBackend(
                api_key=s.api_key.get_secret_value(),
                base_url=s.base_url,
                policy=CallPolicy(
                    timeout_s=s.timeout_s,
                    attempt_timeout_s=s.attempt_timeout_s,
                    max_attempts=s.max_attempts,
                ),
                ingest_timeout_s=s.ingest_timeout_s,
                clock=clock,
            )
    stack.push_async_callback(backend.close)
    return ValidatingMemoryBackend(backend)


async def _client(stack: AsyncExitStack) -> httpx.AsyncClient:
    client = httpx.AsyncClient()
    stack.push_async_callback(client.aclose)
    return client
