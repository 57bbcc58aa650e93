"""Ledgers and projection view stores of a given kind, for tests parametrised over them.

Unit tests ask for the kinds that need no server (POPO, in-memory, SQLite); the same tests
run again on PostgreSQL from tests/integration/on_postgres, which passes the `postgres`
fixture's location.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.ledger_stores import LedgerStore, make_store
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN
from factledger.testing.story.steps import StoryIds


@contextmanager
def ledger_store(
    kind: str, tmp_path: Path, postgres: PostgresLocation | None = None
) -> Iterator[LedgerStore]:
    """A fresh, empty event store of `kind` ("popo", "sqlite", "postgres"), closed after."""
    store = make_store(kind, workdir=tmp_path, postgres=postgres)
    with store.resources:
        yield store


def make_view_store(
    kind: str, tmp_path: Path, postgres: PostgresLocation | None = None, *, name: str = ""
) -> ViewStore:
    """A view store of `kind` ("memory", "sqlite", "postgres"); a new projection name unless
    `name` is given (two handles with one name share their documents)."""
    name = name or f"profile_{uuid4().hex[:8]}"
    if kind == "memory":
        return InMemoryViewStore(name)
    if kind == "sqlite":
        return SqliteViewStore(tmp_path / "views.sqlite", name)
    if kind == "postgres" and postgres is not None:
        return PostgresViewStore(postgres.conninfo, name, schema=f"views_{name}")
    raise ValueError(f"unknown view store {kind}")


@contextmanager
def view_store_factory(
    kind: str, tmp_path: Path, postgres: PostgresLocation | None = None
) -> Iterator[Callable[[], ViewStore]]:
    """Makes view stores of one kind on demand and closes them all at the end."""
    made: list[ViewStore] = []

    def factory() -> ViewStore:
        made.append(make_view_store(kind, tmp_path, postgres))
        return made[-1]

    try:
        yield factory
    finally:
        for store in made:
            store.close()


@contextmanager
def twin_view_stores(
    kind: str, tmp_path: Path, postgres: PostgresLocation | None = None
) -> Iterator[list[ViewStore]]:
    """Two handles on one projection's store, as two processes would hold (one object in
    memory, where there is only one process)."""
    name = f"profile_{uuid4().hex[:8]}"
    if kind == "memory":
        shared = make_view_store(kind, tmp_path, name=name)
        stores = [shared, shared]
    else:
        stores = [make_view_store(kind, tmp_path, postgres, name=name) for _ in range(2)]
    try:
        yield stores
    finally:
        for store in stores:
            store.close()


@dataclass
class Projected:
    ledger: Ledger
    ids: StoryIds
    projection: ProfileProjection
    reader: ViewStoreProfileReader
    follower: Follower


@dataclass
class Followed:
    """A POPO ledger whose clock starts at JAN, its events followed into a profile projection."""

    ledger: Ledger
    clock: ManualClock
    projection: ProfileProjection
    follower: Follower


@contextmanager
def followed_ledger(store: ViewStore) -> Iterator[Followed]:
    projection = ProfileProjection(store)
    clock = ManualClock(JAN)
    with Ledger(
        {"PERSISTENCE_MODULE": "eventsourcing.popo"}, clock=clock, keys=InMemoryKeyStore()
    ) as ledger:
        yield Followed(ledger, clock, projection, Follower(ledger, [projection], page=3))


@contextmanager
def projected_story(store: ViewStore) -> Iterator[Projected]:
    """The story on a POPO ledger, projected live: the follower catches up after every step."""
    with followed_ledger(store) as f:
        ids = run_story(f.ledger, f.clock, lambda _: f.follower.catch_up())
        yield Projected(f.ledger, ids, f.projection, ViewStoreProfileReader(store), f.follower)
