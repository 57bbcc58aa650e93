"""The runtime the queue bench serves: the product's PostgreSQL ledger, views and review
queue, composed as `api.bootstrap` composes them, with one lab variant injected: a key store
whose keys for the seeded subjects are created in bulk before their events are saved. A second
variant, for side-by-side runs, reads the queue counting as it did before the combined
counters (`counted_over_rows`).

Every subject's transcript and each of its fields are encrypted with keys of their own
(deletable, for forgetting). The product creates a key on a scope's first save, one commit
each: right for traffic, but 110,000 commits for the seed alone. `PrimedKeys.prime` inserts a
batch's keys in one statement, in the product's own table and format, and answers `current`
for them from memory; every other call goes to the product's key store.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace

import psycopg
from psycopg import sql

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.queue_store import PostgresQueueStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.review_queue_sql import counted_filter
from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.cipher import new_key
from factledger.application.ledger.ledger import Ledger
from factledger.application.review_queue.ports import QueueWrites, RowGroups, RowPage
from factledger.application.review_queue.queue import (
    QueueChoices,
    QueueCursor,
    QueueFilter,
    Selected,
)
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue

LEDGER_SCHEMA, VIEWS_SCHEMA = "queue_ledger", "queue_views"


class PrimedKeys:
    """A `KeyStore`: the product's, with keys created in bulk ahead of a batch's save."""

    def __init__(self, store: PostgresKeyStore, location: PostgresLocation, schema: str) -> None:
        self._store, self._conninfo = store, location.conninfo
        self._table = sql.Identifier(schema, "ledger_keys")
        self._primed: dict[str, tuple[str, bytes]] = {}

    def prime(self, scopes: Collection[str]) -> None:
        fresh = {scope: new_key() for scope in scopes if scope not in self._primed}
        if not fresh:
            return
        ids = [key_id for key_id, _ in fresh.values()]
        keys = [key for _, key in fresh.values()]
        with psycopg.connect(self._conninfo, autocommit=True) as conn:
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} SELECT k, s, v, true "
                    "FROM unnest(%s::text[], %s::text[], %s::bytea[]) AS t(k, s, v)"
                ).format(self._table),
                (ids, list(fresh), keys),
            )
        self._primed.update(fresh)

    def current(self, scope: str) -> tuple[str, bytes]:
        primed = self._primed.get(scope)
        return primed if primed is not None else self._store.current(scope)

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        found = {scope: self._primed[scope] for scope in scopes if scope in self._primed}
        missing = [scope for scope in scopes if scope not in found]
        return found | (self._store.current_many(missing) if missing else {})

    def live(self, scope: str) -> tuple[str, bytes] | None:
        primed = self._primed.get(scope)
        return primed if primed is not None else self._store.live(scope)

    def key(self, key_id: str) -> bytes | None:
        return self._store.key(key_id)

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        return self._store.keys_by_id(key_ids)

    def forget(self, scope: str) -> int:
        self._primed.pop(scope, None)
        return self._store.forget(scope)

    def forget_many(self, scopes: Collection[str]) -> int:
        for scope in scopes:
            self._primed.pop(scope, None)
        return self._store.forget_many(scopes)

    def forget_prefix(self, prefix: str) -> int:
        for scope in [s for s in self._primed if s.startswith(prefix)]:
            del self._primed[scope]
        return self._store.forget_prefix(prefix)

    def retire(self, scope: str, retired_scope: str) -> str | None:
        self._primed.pop(scope, None)
        return self._store.retire(scope, retired_scope)

    def close(self) -> None:
        self._store.close()


@contextmanager
def bench_runtime(location: PostgresLocation) -> Iterator[tuple[Runtime, PrimedKeys]]:
    with ExitStack() as stack:
        keys = PrimedKeys(
            PostgresKeyStore(location.conninfo, schema=LEDGER_SCHEMA), location, LEDGER_SCHEMA
        )
        stack.callback(keys.close)
        ledger = Ledger(postgres_env(location, schema=LEDGER_SCHEMA), keys=keys)
        stack.callback(ledger.close)
        views = PostgresViewStore(location.conninfo, "profile", schema=VIEWS_SCHEMA)
        stack.callback(views.close)
        queue_store = PostgresQueueStore(location.conninfo, schema=VIEWS_SCHEMA)
        stack.callback(queue_store.close)
        projection, queue = ProfileProjection(views), ReviewQueueProjection(queue_store)
        yield (
            Runtime(
                ledger=ledger,
                views=views,
                projection=projection,
                profiles=ViewStoreProfileReader(views),
                follower=Follower(ledger, [projection, queue]),
                queue=StoreReviewQueue(queue_store),
                queue_projection=queue,
            ),
            keys,
        )


class CountedOverRows:
    """The queue's store as it counted before the combined counters (a lab variant, for a
    side-by-side run): a filter that no single-value counter holds (combined filters, ages,
    text searches) is counted over its rows, by bounding it with a position past every row
    (a bound no counter answers); everything else is the product's store."""

    PAST_ALL = 2**62

    def __init__(self, store: PostgresQueueStore) -> None:
        self._store = store
        self.name = store.name

    def transaction(self) -> AbstractContextManager[QueueWrites]:
        return self._store.transaction()

    def drop(self) -> None:
        self._store.drop()

    def close(self) -> None:
        """The product's store is closed by its owner."""

    def _as_before(self, where: QueueFilter) -> QueueFilter:
        if where.up_to is not None or counted_filter(where) is not None:
            return where
        return replace(where, up_to=self.PAST_ALL)

    def page(self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int) -> RowPage:
        return self._store.page(tenant, self._as_before(where), cursor, limit)

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> RowGroups:
        return self._store.groups(tenant, where, offset=offset, limit=limit)

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        return self._store.select(tenant, where, limit=limit)

    def choices(self, tenant: str) -> QueueChoices:
        return self._store.choices(tenant)

    def position(self) -> int:
        return self._store.position()


def counted_over_rows(runtime: Runtime) -> Runtime:
    """The same runtime, its queue's reads counting as before the combined counters."""
    queue = runtime.queue
    if not isinstance(queue, StoreReviewQueue) or not isinstance(queue.store, PostgresQueueStore):
        raise TypeError("the bench's runtime reads a PostgreSQL queue store")
    return replace(runtime, queue=StoreReviewQueue(CountedOverRows(queue.store)))
