"""Errors of the application layer. Messages name fields and ids, never content.

Every error a use case or a port raises derives from `ApplicationError`; the domain's rules
raise `domain.errors.DomainError` instead. A store that cannot reach its database raises a
`StoreUnavailableError` (each port has its own subclass), so the API maps the whole family
once, to 503 with `Retry-After`.
"""

from __future__ import annotations


class ApplicationError(Exception):
    """Base class of every error raised by a use case or a port."""


class NotFoundError(ApplicationError):
    """There is no such subject, record or memory (in this tenant or namespace)."""


class ConcurrencyError(ApplicationError):
    """Another writer moved the subject on and the command could not be retried safely."""


class StoreUnavailableError(ApplicationError):
    """A store's database cannot be reached or failed mid-call; retrying later may succeed.

    Adapters raise the subclass of their port and keep the driver error as `__cause__` (never
    in the message: it can name hosts).
    """


class StorageFullError(StoreUnavailableError):
    """A store's disk is full: writes fail until space is freed (reads may still succeed)."""


class StorageReadOnlyError(StoreUnavailableError):
    """A store accepts reads only: a read-only file or mount, or a PostgreSQL standby."""


class ModelUnavailableError(StoreUnavailableError):
    """A model the call needs failed to load; it is loaded again after a pause (ADR 0182).
    Answered as a store that cannot be reached is: a 503 with `Retry-After`, a degraded
    recall, a sync item that waits (ADR 0183). The load's error is the `__cause__`."""


# What the drivers report, read through their documented attributes so that the core imports
# no driver: sqlite3's `sqlite_errorcode` (primary code in the low byte) and psycopg's `sqlstate`.
_SQLITE_FULL, _SQLITE_READONLY = 13, 8
_SQLSTATE_DISK_FULL, _SQLSTATE_READ_ONLY = "53100", "25006"


def storage_failure(exc: BaseException) -> type[StoreUnavailableError] | None:
    """`StorageFullError` or `StorageReadOnlyError` when `exc` (or an error it was raised from)
    is a driver's "disk full" or "read-only" error; None for any other failure."""
    seen: BaseException | None = exc
    for _ in range(8):  # a cause chain is short; the bound guards against a cycle
        if seen is None:
            return None
        code = getattr(seen, "sqlite_errorcode", None)
        if isinstance(code, int):
            if code & 0xFF == _SQLITE_FULL:
                return StorageFullError
            if code & 0xFF == _SQLITE_READONLY:
                return StorageReadOnlyError
        sqlstate = getattr(seen, "sqlstate", None)
        if sqlstate == _SQLSTATE_DISK_FULL:
            return StorageFullError
        if sqlstate == _SQLSTATE_READ_ONLY:
            return StorageReadOnlyError
        seen = seen.__cause__
    return None


def port_error(exc: BaseException, error: Exception) -> Exception:
    """The error a store raises for the driver failure `exc`: a storage error when the disk is
    full or read-only (its message names the store, from `error`), else `error` itself."""
    storage = storage_failure(exc)
    return error if storage is None else storage(f"{error}: {storage.__name__}")


class MemoryBackendError(ApplicationError):
    """Base class of the errors that cross the memory port."""


class MemoryUnavailableError(MemoryBackendError, StoreUnavailableError):
    """The backend cannot be reached or refused to serve (5xx, out of credits, forbidden)."""


class MemoryTimeoutError(MemoryBackendError):
    """The backend did not answer within the time allowed."""


class InvalidMemoryInputError(MemoryBackendError):
    """A request to the memory port is malformed; the message names the field and the rule."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class MemoryNotFoundError(MemoryBackendError, NotFoundError):
    """The namespace holds no such record, memory or document."""


class MemoryConflictError(MemoryBackendError):
    """A write collides with what is stored (e.g. a record id reused with another body)."""
