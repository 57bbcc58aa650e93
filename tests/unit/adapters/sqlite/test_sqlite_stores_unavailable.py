"""Every SQLite store reports a database file it cannot use as its port's member of the
`StoreUnavailableError` family (the API's 503), never as a `sqlite3` error: a path it cannot
open, and a store whose connection is closed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pytest

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.ports import (
    IdempotencyStoreUnavailableError,
    KeyStoreUnavailableError,
    ViewStoreUnavailableError,
)
from factledger.application.sessions.types import (
    SessionBufferUnavailableError,
    SessionId,
    SessionKey,
)

SUBJECT = UUID("00000000-0000-0000-0000-00000000000a")


def fails_with(error: type[StoreUnavailableError], call: Callable[[], object]) -> None:
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value.__cause__, sqlite3.Error)


def test_the_session_buffer_reports_a_file_it_cannot_use(tmp_path: Path) -> None:
    fails_with(SessionBufferUnavailableError, lambda: SqliteSessionBuffer(tmp_path))
    buffer = SqliteSessionBuffer(tmp_path / "buffer.sqlite")
    buffer.close()
    fails_with(
        SessionBufferUnavailableError,
        lambda: asyncio.run(buffer.get(SessionKey(SUBJECT, SessionId("s-1")))),
    )


def test_the_idempotency_store_reports_a_file_it_cannot_use(tmp_path: Path) -> None:
    fails_with(IdempotencyStoreUnavailableError, lambda: SqliteIdempotencyStore(tmp_path))
    store = SqliteIdempotencyStore(tmp_path / "idempotency.sqlite")
    store.close()
    scope = IdempotencyScope("t1", "agent-1", SUBJECT, "key-1")
    fails_with(IdempotencyStoreUnavailableError, lambda: asyncio.run(store.claim(scope, "f")))


def test_the_key_store_reports_a_file_it_cannot_use(tmp_path: Path) -> None:
    fails_with(KeyStoreUnavailableError, lambda: SqliteKeyStore(tmp_path))
    keys = SqliteKeyStore(tmp_path / "keys.sqlite")
    keys.close()
    fails_with(KeyStoreUnavailableError, lambda: keys.current("subject-1"))
    fails_with(KeyStoreUnavailableError, lambda: keys.key("key-1"))
    fails_with(KeyStoreUnavailableError, lambda: keys.forget("subject-1"))


def test_the_view_store_reports_a_file_it_cannot_use(tmp_path: Path) -> None:
    fails_with(ViewStoreUnavailableError, lambda: SqliteViewStore(tmp_path, "profile"))
    views = SqliteViewStore(tmp_path / "views.sqlite", "profile")
    views.close()
    fails_with(ViewStoreUnavailableError, views.position)
    fails_with(ViewStoreUnavailableError, views.drop)

    def read() -> None:
        with views.read() as txn:
            txn.get("profile", "subject-1")

    def write() -> None:
        with views.transaction() as txn:
            txn.put("profile", "subject-1", {})

    fails_with(ViewStoreUnavailableError, read)
    fails_with(ViewStoreUnavailableError, write)
