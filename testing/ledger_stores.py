"""Ledgers on each supported event store, for tests that must pass on all of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from uuid import uuid4

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.clocks import Clock
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore
from factledger.domain.values import ProfileSchema


@dataclass
class LedgerStore:
    """A fresh, empty event store and the key store that goes with it."""

    kind: str
    env: dict[str, str]
    keys: KeyStore
    resources: ExitStack = field(default_factory=ExitStack)

    @property
    def shared(self) -> bool:
        """Whether two ledgers opened on it see the same events (POPO stores are private)."""
        return self.kind != "popo"


def make_store(kind: str, *, workdir: Path, postgres: PostgresLocation | None) -> LedgerStore:
    """A new store of the given kind (a new file, or a new schema on PostgreSQL)."""
    if kind == "popo":
        return LedgerStore(kind, popo_env(), InMemoryKeyStore())
    if kind == "sqlite":
        name = f"ledger-{uuid4().hex[:8]}"
        sqlite_keys = SqliteKeyStore(workdir / f"{name}-keys.sqlite")
        store = LedgerStore(kind, sqlite_env(workdir / f"{name}.sqlite"), sqlite_keys)
        store.resources.callback(sqlite_keys.close)
        return store
    if kind == "postgres" and postgres is not None:
        schema = f"ledger_{uuid4().hex[:12]}"
        pg_keys = PostgresKeyStore(postgres.conninfo, schema=schema)
        store = LedgerStore(kind, postgres_env(postgres, schema=schema), pg_keys)
        store.resources.callback(pg_keys.close)
        return store
    raise ValueError(f"unknown store {kind}")


@contextmanager
def open_ledger(
    store: LedgerStore,
    *,
    clock: Clock | None = None,
    schemas: Mapping[str, ProfileSchema] | None = None,
) -> Iterator[Ledger]:
    ledger = Ledger(store.env, clock=clock, schemas=schemas, keys=store.keys)
    try:
        yield ledger
    finally:
        ledger.close()
