"""`SqliteIdempotencyStore` beyond the port's contract (see tests/contracts): schema migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import UUID

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.application.ledger.idempotency import ClaimStatus, IdempotencyScope

SUBJECT = UUID("00000000-0000-0000-0000-00000000000a")


async def test_saved_responses_keyed_without_the_subject_are_never_replayed(
    tmp_path: Path,
) -> None:
    # Given a saved response in a table keyed by (tenant, principal, key) only
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE idempotency_keys (tenant TEXT NOT NULL, principal TEXT NOT NULL,"
            " key TEXT NOT NULL, fingerprint TEXT NOT NULL, body TEXT, expires_at REAL NOT NULL,"
            " PRIMARY KEY (tenant, principal, key))"
        )
        conn.execute(
            "INSERT INTO idempotency_keys VALUES ('t1', 'bot', 'key-00000001', 'fp', '{}', 9e12)"
        )
    # When the store opens it, then that response answers for no subject
    store = SqliteIdempotencyStore(path)
    try:
        claim = await store.claim(IdempotencyScope("t1", "bot", SUBJECT, "key-00000001"), "fp")
        assert claim.status is ClaimStatus.CLAIMED
    finally:
        store.close()
