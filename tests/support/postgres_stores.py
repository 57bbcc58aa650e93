"""Each PostgreSQL store of ours opened and closed on a schema, by name: for the tests of how
stores create their tables (at once from several processes, beside writers)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.delivery_log import PostgresDeliveryLog
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.import_positions import PostgresImportPositions
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger

Opener = Callable[[PostgresLocation, str], None]


class _Closable(Protocol):
    async def close(self) -> None: ...


def _ledger(location: PostgresLocation, schema: str) -> None:
    Ledger(postgres_env(location, schema=schema), keys=InMemoryKeyStore()).close()


def _keys(location: PostgresLocation, schema: str) -> None:
    PostgresKeyStore(location.conninfo, schema=schema).close()


def _views(location: PostgresLocation, schema: str) -> None:
    PostgresViewStore(location.conninfo, "profile", schema=schema).close()


def _async(connect: Callable[[str, str], Awaitable[_Closable]]) -> Opener:
    def opens(location: PostgresLocation, schema: str) -> None:
        async def run() -> None:
            store = await connect(location.conninfo, schema)
            await store.close()

        asyncio.run(run())

    return opens


OPENERS: dict[str, Opener] = {
    "ledger": _ledger,
    "keys": _keys,
    "views": _views,
    "session buffer": _async(lambda c, s: PostgresSessionBuffer.connect(c, schema=s)),
    "sync queue": _async(lambda c, s: PostgresSyncStore.connect(c, schema=s)),
    "webhook deliveries": _async(lambda c, s: PostgresDeliveryLog.connect(c, schema=s)),
    "idempotency keys": _async(lambda c, s: PostgresIdempotencyStore.connect(c, schema=s)),
    "import positions": _async(lambda c, s: PostgresImportPositions.connect(c, schema=s)),
}
