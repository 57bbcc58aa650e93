"""The ledger part: `Settings` -> the event store, its deletable keys and the profile views.

`open_ledger` yields a `Runtime` with the ledger, its views and the follower that feeds them;
`compose` adds the other parts to it. PostgreSQL-backed parts borrow `postgres` and never stop
it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.proposals import profile_schemas
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.settings import (
    InMemoryEventStoreSettings,
    InMemoryViewSettings,
    PostgresEventStoreSettings,
    PostgresViewSettings,
    Settings,
    SqliteEventStoreSettings,
    SqliteViewSettings,
)
from factledger.application.clocks import Clock
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore, ViewStore
from factledger.application.review_queue.ports import QueueStore
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue

PROFILE_PROJECTION = "profile"


def event_store_env(settings: Settings, postgres: PostgresServer) -> dict[str, str]:
    """The `eventsourcing` library's persistence settings for the configured event store."""
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return popo_env()
        case SqliteEventStoreSettings():
            return sqlite_env(settings.ledger_path())
        case PostgresEventStoreSettings(schema_name=schema):
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres.event_store import postgres_env

            pool = postgres.pool(max_size=settings.postgres.event_store_pool_max_size)
            return postgres_env(postgres.location(), schema=schema, pool=pool)


def build_key_store(settings: Settings, postgres: PostgresServer, stack: ExitStack) -> KeyStore:
    """The deletable keys of the ledger's personal fields, beside its events."""
    match settings.event_store:
        case InMemoryEventStoreSettings():
            return InMemoryKeyStore()
        case SqliteEventStoreSettings():
            sqlite_keys = SqliteKeyStore(settings.keys_path())
            stack.callback(sqlite_keys.close)
            return sqlite_keys
        case PostgresEventStoreSettings(schema_name=schema):
            from factledger.adapters.postgres.key_store import PostgresKeyStore

            pg_keys = PostgresKeyStore(
                postgres.location().conninfo, schema=schema, pool=postgres.pool()
            )
            stack.callback(pg_keys.close)
            return pg_keys


def route_history_reads(
    settings: Settings, postgres: PostgresServer, ledger: Ledger, stack: ExitStack
) -> None:
    """With a standby that serves reads, the ledger's history (a subject's events, the event
    stream) reads it when the request may; commands and followers keep the primary."""
    standby = postgres.read_location()
    if standby is None or not isinstance(settings.event_store, PostgresEventStoreSettings):
        return
    from factledger.adapters.postgres.standby_ledger import (
        RoutedReads,
        standby_factory,
        standby_recorder,
    )

    factory = standby_factory(
        standby,
        application=Ledger.name,
        schema=settings.event_store.schema_name,
        pool=postgres.pool(max_size=settings.postgres.event_store_pool_max_size),
    )
    stack.callback(factory.close)
    ledger.read_history_from(RoutedReads(ledger.recorder, standby_recorder(factory)))


def build_view_store(settings: Settings, postgres: PostgresServer, name: str) -> ViewStore:
    match settings.views:
        case InMemoryViewSettings():
            return InMemoryViewStore(name)
        case SqliteViewSettings():
            return SqliteViewStore(settings.views_path(), name)
        case PostgresViewSettings(schema_name=schema):
            from factledger.adapters.postgres.view_store import PostgresViewStore

            standby = postgres.read_location()
            return PostgresViewStore(
                postgres.location().conninfo,
                name,
                schema=schema,
                pool=postgres.pool(),
                read_conninfo=None if standby is None else standby.conninfo,
            )


def build_queue_store(settings: Settings, postgres: PostgresServer) -> QueueStore:
    """The review queue's indexed tables, where the views are (in memory: a private SQLite
    database, the one embedded engine with indexes)."""
    match settings.views:
        case InMemoryViewSettings():
            return SqliteQueueStore(":memory:")
        case SqliteViewSettings():
            return SqliteQueueStore(settings.views_path())
        case PostgresViewSettings(schema_name=schema):
            from factledger.adapters.postgres.queue_store import PostgresQueueStore

            standby = postgres.read_location()
            return PostgresQueueStore(
                postgres.location().conninfo,
                schema=schema,
                pool=postgres.pool(),
                read_conninfo=None if standby is None else standby.conninfo,
            )


@contextmanager
def open_ledger(
    settings: Settings, postgres: PostgresServer, *, clock: Clock | None, catch_up: bool
) -> Iterator[Runtime]:
    """Opens the ledger and its views and (with `catch_up`) brings the views up to the log;
    closes them on exit, in reverse order."""
    with ExitStack() as stack:
        keys = build_key_store(settings, postgres, stack)
        ledger = Ledger(
            event_store_env(settings, postgres),
            clock=clock,
            keys=keys,
            schemas=profile_schemas(settings),
        )
        stack.callback(ledger.close)
        route_history_reads(settings, postgres, ledger, stack)
        views = build_view_store(settings, postgres, PROFILE_PROJECTION)
        stack.callback(views.close)
        projection = ProfileProjection(views)
        queue_store = build_queue_store(settings, postgres)
        stack.callback(queue_store.close)
        queue_projection = ReviewQueueProjection(queue_store)
        runtime = Runtime(
            ledger=ledger,
            views=views,
            projection=projection,
            profiles=ViewStoreProfileReader(views),
            follower=Follower(ledger, [projection, queue_projection]),
            queue=StoreReviewQueue(queue_store),
            queue_projection=queue_projection,
        )
        if catch_up:
            runtime.catch_up()
        yield runtime
