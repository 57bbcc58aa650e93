"""The ledger reports an event store it cannot reach as `EventStoreUnavailableError` (a member
of the `StoreUnavailableError` family, the API's 503), never as the library's error."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.persistence import PersistenceError

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.projections.follower import max_position


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    env = {
        **sqlite_env(tmp_path / "ledger.sqlite"),
        "SQLITE_LOCK_TIMEOUT": "1",
    }  # seconds; 0 means the default
    with Ledger(env, keys=InMemoryKeyStore()) as ledger:
        yield ledger


def test_a_file_that_cannot_be_opened_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(EventStoreUnavailableError) as error:
        Ledger(sqlite_env(tmp_path), keys=InMemoryKeyStore())  # a folder, not a database file
    assert isinstance(error.value.__cause__, PersistenceError)


def test_a_store_locked_by_another_writer_fails_commands(ledger: Ledger, tmp_path: Path) -> None:
    other = sqlite3.connect(tmp_path / "ledger.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(EventStoreUnavailableError):
            ledger.register_subject(RegisterSubject("acme", "lead", "lead-1"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    ledger.register_subject(RegisterSubject("acme", "lead", "lead-1"))
    assert max_position(ledger) == 1
