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

from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from uuid import UUID, uuid4

import pytest

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_pool import PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import ProposeChange, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStoreUnavailableError
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue

pytestmark = pytest.mark.integration

TENANT = "acme"
FAILURES = 4
# One connection, and a short wait for it: a leaked connection shows as a failed write.
POOL = PoolOptions(min_size=1, max_size=1, acquire_timeout_s=2.0)
# Far beyond a write on an idle embedded server, well below the pool's wait times the writes.
DEADLINE_S = 30.0


class FailingKeyStore:
    """The PostgreSQL key store, its key issue failing while `failures` is above zero (the
    error the store raises when its database fails)."""

    def __init__(self, inner: PostgresKeyStore) -> None:
        self.inner = inner
        self.failures = 0

    def current(self, scope: str) -> tuple[str, bytes]:
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        if self.failures > 0:
            self.failures -= 1
            raise KeyStoreUnavailableError("key store failed (test)")
        return self.inner.current_many(scopes)

    def key(self, key_id: str) -> bytes | None:
        return self.inner.key(key_id)

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        return self.inner.keys_by_id(key_ids)

    def forget(self, scope: str) -> int:
        return self.inner.forget(scope)

    def forget_many(self, scopes: Collection[str]) -> int:
        return self.inner.forget_many(scopes)

    def forget_prefix(self, prefix: str) -> int:
        return self.inner.forget_prefix(prefix)


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


def proposal(subject_id: UUID, n: int) -> ProposeChange:
    return ProposeChange(
        tenant=TENANT,
        subject_id=subject_id,
        field=f"field_{n}",
        operation=Operation.SET,
        value=TextValue(f"value {n}"),
        origin=Origin.INFERRED,
        proposed_by=Actor(ActorKind.MODEL, "extractor"),
        based_on_version=0,
    )


def pool_stats(ledger: Ledger) -> dict[str, int]:
    return dict(ledger.recorder.datastore.pool.get_stats())  # type: ignore[attr-defined]


def test_writes_after_key_store_failures_are_served(ledger: Ledger, keys: FailingKeyStore) -> None:
    subject_id = ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-1")).subject_id
    assert pool_stats(ledger)["pool_max"] == 1

    keys.failures = FAILURES
    for n in range(FAILURES):
        with pytest.raises(KeyStoreUnavailableError):
            ledger.propose_change(proposal(subject_id, n))
    assert keys.failures == 0

    def writes() -> list[int | None]:
        return [
            ledger.propose_change(proposal(subject_id, FAILURES + n)).position
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
