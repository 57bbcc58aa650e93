"""Ports of the ledger: the stores it keeps its views, keys and saved responses in, the reader
of its read models, and the errors that cross them; adapters implement them.

- View stores: for one projection name, documents addressed by (view, key) and the
  notification-log position the documents reflect. Everything a transaction writes, position
  included, commits together or not at all; that is what makes replays and restarts safe.
  Keys sort as plain strings (byte order), so callers zero-pad numbers and write UTC times in
  a fixed-width form.
- Key stores: deletable encryption keys, what makes "forget" real in an append-only ledger.
  A scope names what a key protects: `<subject id>` (what identifies the subject: its
  reference, its sessions' fingerprints, reasons), `<subject id>/<field>` and
  `<subject id>/<field>#<n>` (the generations of one profile field's key: its confirming words
  and notes; a forget shreds the generation it names, later words get the next),
  `<subject id>/~change/<change id>` (one proposed change's value, condition, quote and
  rationale), `<subject id>/~line/<session id>#<index>` (one transcript message) and
  `<subject id>/~summary/<session id>` (one session's summary). Deleting a scope's keys makes
  every ciphertext written under them unreadable for good; a later write to the same scope
  gets a new key (the ledger never writes again to a scope it shredded). Every scope of a
  subject starts with its id, so an erasure deletes them all with one `forget_prefix`; a
  retired subject key lives under `<subject id>/~retired/` until its rotation deletes it.
  Keys cannot be rebuilt from events: back the store up.
- Idempotency stores: a retried command, on any process, acts once (the contract is spelled
  out in `idempotency`, beside the types it speaks).
- The profile reader: queries over the profile projection (the read models are in `queries`).

Each port's docstring states the contract its shared test suite (`tests/contracts`) checks.
The composition root picks every adapter explicitly.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, runtime_checkable
from uuid import UUID

from factledger.application.errors import ApplicationError, StoreUnavailableError
from factledger.application.ledger.idempotency import Claim, IdempotencyScope, JsonBody
from factledger.application.ledger.queries import (
    DEFAULT_CLOCK,
    Clock,
    FieldDiff,
    FieldHistoryEntry,
    ProfileVersion,
    SessionEntry,
    SubjectSummary,
)
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


class KeyStoreUnavailableError(StoreUnavailableError):
    """The key store's database failed; the driver error is kept as `__cause__`."""


class KeyStore(Protocol):
    """Per-scope keys with ids; `forget` is final. A database failure raises
    `KeyStoreUnavailableError`."""

    def current(self, scope: str) -> tuple[str, bytes]:
        """The scope's live key `(key id, key)`, created on first use."""
        ...

    def live(self, scope: str) -> tuple[str, bytes] | None:
        """The scope's live key, or None when it has none: a read that never creates one."""
        ...

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """`current` of every scope, in one transaction: a session's end seals each of its
        messages under a key of its own, and a round trip per message would cost more than
        the save."""
        ...

    def key(self, key_id: str) -> bytes | None:
        """The key with this id, or None once its scope was forgotten."""
        ...

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        """The keys among these ids that still exist (a forgotten one is absent), in one read:
        a rebuild meets thousands of key ids, a round trip each was a tenth of its time."""
        ...

    def forget(self, scope: str) -> int:
        """Deletes every key of the scope; returns how many were deleted (0: idempotent)."""
        ...

    def forget_many(self, scopes: Collection[str]) -> int:
        """`forget` of every scope, in one statement; returns how many keys went."""
        ...

    def forget_prefix(self, prefix: str) -> int:
        """Deletes every key whose scope starts with `prefix` (a subject id: all of its keys)."""
        ...

    def retire(self, scope: str, retired_scope: str) -> str | None:
        """Moves the scope's live key to `retired_scope`, no longer live: the next `current`
        of `scope` creates a new key, and the old one still opens what it sealed until
        `retired_scope` is forgotten. Returns its key id; None when the scope had no key."""
        ...


class IdempotencyStoreUnavailableError(StoreUnavailableError):
    """The idempotency store failed; the driver error is kept as `__cause__`."""


class IdempotencyStore(Protocol):
    """Saved responses per idempotency key, shared by every API process of one deployment."""

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim: ...

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None: ...

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None: ...

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int: ...

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool: ...

    async def sweep_expired(self, limit: int) -> int: ...

    @property
    def lease_s(self) -> float:
        """How long a claim lives unless renewed."""
        ...


@runtime_checkable
class PrunesOlder(Protocol):
    """A snapshot recorder that can delete a subject's older snapshots (the adapters' are)."""

    def delete_older(self, originator_id: UUID, version: int) -> int: ...


class ProfileReader(Protocol):
    """Queries over the profile projection; reads never replay a stream."""

    def subject(self, tenant: str, subject_id: UUID) -> SubjectSummary: ...

    def subjects(self, tenant: str) -> list[SubjectSummary]: ...

    def current(self, tenant: str, subject_id: UUID) -> ProfileVersion: ...

    def current_many(self, tenant: str, subject_ids: Sequence[UUID]) -> dict[UUID, ProfileVersion]:
        """`current` of each subject in one read (a page of the review queue shows fifty);
        subjects not found in the tenant are left out."""
        ...

    def version(self, tenant: str, subject_id: UUID, version: int) -> ProfileVersion: ...

    def versions(self, tenant: str, subject_id: UUID) -> list[ProfileVersion]: ...

    def as_of(
        self, tenant: str, subject_id: UUID, at: datetime, clock: Clock = DEFAULT_CLOCK
    ) -> ProfileVersion:
        """The profile at `at` on `clock`. `known`: the version the ledger had written by
        then (version 0, empty, from registration on; `NotFoundError` before). `said`: each
        field's latest value said by then, by what the ledger knows now (empty, never
        missing, before anything was said)."""
        ...

    def history(
        self, tenant: str, subject_id: UUID, field: str | None = None
    ) -> list[FieldHistoryEntry]: ...

    def diff(self, tenant: str, subject_id: UUID, older: int, newer: int) -> list[FieldDiff]: ...

    def diff_at(
        self,
        tenant: str,
        subject_id: UUID,
        older: datetime,
        newer: datetime,
        clock: Clock = DEFAULT_CLOCK,
    ) -> list[FieldDiff]:
        """What changed between the profiles at two times on one clock (a time before the
        subject was known compares as empty)."""
        ...

    def sessions(self, tenant: str, subject_id: UUID) -> list[SessionEntry]: ...
