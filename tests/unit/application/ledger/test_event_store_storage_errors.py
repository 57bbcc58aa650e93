"""The event store reports a full or read-only disk as `StorageFullError` or
`StorageReadOnlyError` whichever of the library's error classes carried the driver's error;
PostgreSQL's read-only transaction (SQLSTATE 25006) arrives as the library's `InternalError`,
which used to escape untranslated (a 500)."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from eventsourcing.persistence import (
    IntegrityError,
    InternalError,
    OperationalError,
    PersistenceError,
)

from factledger.application.errors import (
    StorageFullError,
    StorageReadOnlyError,
    StoreUnavailableError,
    storage_failure,
)
from factledger.application.ledger.event_store_errors import (
    EventStoreUnavailableError,
    translated,
)


def sqlite_error(code: int, message: str) -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code  # set by sqlite3 itself on a real failure
    return error


def raising(error: PersistenceError, cause: BaseException) -> None:
    raise error from cause


@pytest.mark.parametrize(
    ("library_error", "cause", "expected"),
    [
        (OperationalError, sqlite_error(13, "database or disk is full"), StorageFullError),
        (
            OperationalError,
            sqlite_error(8, "readonly database"),
            StorageReadOnlyError,
        ),
        (OperationalError, psycopg.errors.DiskFull(), StorageFullError),
        (InternalError, psycopg.errors.ReadOnlySqlTransaction(), StorageReadOnlyError),
        (OperationalError, psycopg.errors.AdminShutdown(), EventStoreUnavailableError),
    ],
)
def test_storage_failures_become_their_own_503(
    library_error: type[PersistenceError],
    cause: BaseException,
    expected: type[StoreUnavailableError],
) -> None:
    call = translated(lambda: raising(library_error("failed"), cause))
    with pytest.raises(expected) as raised:
        call()
    assert isinstance(raised.value.__cause__, library_error)


def test_a_concurrent_writer_still_passes_unchanged() -> None:
    call = translated(lambda: raising(IntegrityError("taken"), psycopg.errors.UniqueViolation()))
    with pytest.raises(IntegrityError):
        call()


def test_other_driver_errors_are_no_storage_failure() -> None:
    assert storage_failure(sqlite_error(5, "database is locked")) is None
    assert storage_failure(psycopg.errors.UndefinedTable()) is None
    assert storage_failure(ValueError("not a driver error")) is None
