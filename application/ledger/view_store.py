"""The port projections keep their views behind: ordered JSON documents and a tracked position.

A view store holds, for one projection name, documents addressed by (view, key) and the
notification-log position the documents reflect. Everything a transaction writes, position
included, commits together or not at all; that is what makes replays and restarts safe.

Adapters: `InMemoryViewStore` (projections), `SqliteViewStore` and `PostgresViewStore`
(adapters). Keys sort as plain strings (byte order), so callers zero-pad numbers and write
UTC times in a fixed-width form.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from factledger.application.errors import ApplicationError, StoreUnavailableError
from factledger.domain.values import JsonObject


class PositionMovedError(ApplicationError):
    """Another follower advanced the same projection first; this transaction was rolled back."""


class ViewStoreUnavailableError(StoreUnavailableError):
    """The view store's database failed; the driver error is kept as `__cause__`."""


class ViewTransaction(Protocol):
    """Reads see this transaction's own writes."""

    def get(self, view: str, key: str) -> JsonObject | None: ...

    def get_many(self, view: str, keys: Sequence[str]) -> dict[str, JsonObject]:
        """`get` of each key, in one read of the database; absent keys are left out."""
        ...

    def put(self, view: str, key: str, doc: JsonObject) -> None: ...

    def put_each(self, addresses: Sequence[tuple[str, str]], doc: JsonObject) -> None:
        """`put` of the same document at each (view, key) address, in order (a store that
        encodes documents encodes it once)."""
        ...

    def delete(self, view: str, key: str) -> None: ...

    def scan(self, view: str, prefix: str) -> list[tuple[str, JsonObject]]:
        """Documents whose key starts with `prefix`, in key order."""
        ...

    def position(self) -> int: ...

    def advance(self, position: int) -> None:
        """Records the new position; raises `PositionMovedError` at commit (or now) when another
        follower moved it since this transaction read it."""
        ...


class ViewStore(Protocol):
    """Documents and tracked position of one projection; see the module docstring. A database
    failure raises `ViewStoreUnavailableError`."""

    name: str

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        """Commits on normal exit, rolls back on an exception."""
        ...

    def read(self) -> AbstractContextManager[ViewTransaction]:
        """A read-only view of the documents; unlike `transaction`, it never waits for (or
        blocks) a follower's write. Writing through it is a programming error."""
        ...

    def position(self) -> int: ...

    def drop(self) -> None:
        """Deletes every document and the position (a rebuild then starts from zero)."""
        ...

    def close(self) -> None: ...
