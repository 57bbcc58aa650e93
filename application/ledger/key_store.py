"""Deletable encryption keys: the port that makes "forget" real in an append-only ledger.

A scope names what a key protects: `<subject id>` (what identifies the subject: its reference,
its sessions' fingerprints, reasons), `<subject id>/<field>` (one profile field's values,
conditions, quotes and rationales), `<subject id>/~line/<session id>#<index>` (one transcript
message) and `<subject id>/~summary/<session id>` (one session's summary). Deleting a scope's
keys makes every ciphertext written under them unreadable for good; a later write to the same
scope gets a new key. Every scope of a subject starts with its id, so an erasure deletes them
all with one `forget_prefix`.

Adapters (adapters/): `InMemoryKeyStore`, `SqliteKeyStore`, `PostgresKeyStore`. The
composition root picks one explicitly. Keys cannot be rebuilt from events: back the store up.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Collection, Sequence
from typing import Protocol

from factledger.application.errors import StoreUnavailableError

KEY_BYTES = 32  # AES-256-GCM


class KeyStoreUnavailableError(StoreUnavailableError):
    """The key store's database failed; the driver error is kept as `__cause__`."""


class KeyStore(Protocol):
    """Per-scope keys with ids; `forget` is final. A database failure raises
    `KeyStoreUnavailableError`."""

    def current(self, scope: str) -> tuple[str, bytes]:
        """The scope's live key `(key id, key)`, created on first use."""
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


def new_key() -> tuple[str, bytes]:
    return uuid.uuid4().hex, os.urandom(KEY_BYTES)
