"""Ledgers on each supported event store, for tests that must pass on all of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

from factledger.adapters.embedded_postgres import PostgresLocation
from factledger.adapters.ledger_event_store import popo_env, postgres_env, sqlite_env
from factledger.application.ledger import Ledger
from factledger.application.ports import Clock
from factledger.domain.values import ProfileSchema

STORES = ("popo", "sqlite", "postgres")


def store_env(store: str, *, workdir: Path, postgres: PostgresLocation | None) -> dict[str, str]:
    """The env of a fresh, empty event store of the given kind (a new schema on PostgreSQL)."""
    if store == "popo":
        return popo_env()
    if store == "sqlite":
        return sqlite_env(workdir / f"ledger-{uuid4().hex[:8]}.sqlite")
    if store == "postgres" and postgres is not None:
        return postgres_env(postgres, schema=f"ledger_{uuid4().hex[:12]}")
    raise ValueError(f"unknown store {store}")


@contextmanager
def open_ledger(
    env: Mapping[str, str],
    *,
    clock: Clock | None = None,
    schemas: Mapping[str, ProfileSchema] | None = None,
) -> Iterator[Ledger]:
    ledger = Ledger(env, clock=clock, schemas=schemas)
    try:
        yield ledger
    finally:
        ledger.close()
