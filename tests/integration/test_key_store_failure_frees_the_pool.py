"""A key-store failure in the middle of a save costs that save only: the event store's pool
keeps every connection, so the writes after it are served at once.

A save seals each event's personal fields with keys from the key store (the ledger's mapper),
then inserts the sealed events. A key store that fails there raises before the insert; were an
event-store connection already checked out and never given back, a pool of one connection
would be empty after the first such failure and every later write would wait out the pool's
timeout and fail. Here the pool has one connection, the key store fails more times than that,
and then more writes than failures must each succeed within a deadline.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from uuid import uuid4

import pytest
from support.key_stores import DelegatingKeyStore
from support.proposals import numbered

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_pool import PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStoreUnavailableError

pytestmark = pytest.mark.integration

TENANT = "acme"
FAILURES = 4
# One connection, and a short wait for it: a leaked connection shows as a failed write.
POOL = PoolOptions(min_size=1, max_size=1, acquire_timeout_s=2.0)
# Far beyond a write on an idle embedded server, well below the pool's wait times the writes.
DEADLINE_S = 30.0


class FailingKeyStore(DelegatingKeyStore):
    """The PostgreSQL key store, its key issue failing while `failures` is above zero (the
    error the store raises when its database fails)."""

    def __init__(self, inner: PostgresKeyStore) -> None:
        super().__init__(inner)
        self.failures = 0

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        if self.failures > 0:
            self.failures -= 1
            raise KeyStoreUnavailableError("key store failed (test)")
        return self.inner.current_many(scopes)


@pytest.fixture
def keys(postgres: PostgresLocation) -> Iterator[FailingKeyStore]:
    store = PostgresKeyStore(postgres.conninfo, schema=f"keys_{uuid4().hex[:12]}")
    try:
        yield FailingKeyStore(store)
    finally:
        store.close()


@pytest.fixture
def ledger(postgres: PostgresLocation, keys: FailingKeyStore) -> Iterator[Ledger]:
    env = postgres_env(postgres, schema=f"ledger_{uuid4().hex[:12]}", pool=POOL)
    with Ledger(env, keys=keys) as ledger:
        yield ledger


def pool_stats(ledger: Ledger) -> dict[str, int]:
    return dict(ledger.recorder.datastore.pool.get_stats())  # type: ignore[attr-defined]


def test_writes_after_key_store_failures_are_served(ledger: Ledger, keys: FailingKeyStore) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-1")).subject_id
    assert pool_stats(ledger)["pool_max"] == 1

    keys.failures = FAILURES
    for n in range(FAILURES):
        with pytest.raises(KeyStoreUnavailableError):
            ledger.propose_change(numbered(subject_id, n))
    assert keys.failures == 0

    def writes() -> list[int | None]:
        return [
            ledger.propose_change(numbered(subject_id, FAILURES + n)).position
            for n in range(FAILURES + 1)
        ]

    with ThreadPoolExecutor(max_workers=1) as worker:
        positions = worker.submit(writes).result(timeout=DEADLINE_S)
    assert all(p is not None for p in positions)
    subject = ledger.subject(TENANT, subject_id)
    written = {c.field for c in subject.changes.values()}
    assert written == {f"field_{FAILURES + n}" for n in range(FAILURES + 1)}
    stats = pool_stats(ledger)
    assert stats.get("pool_available", 0) == stats["pool_size"] == 1
