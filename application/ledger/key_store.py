"""Deletable encryption keys: the port that makes "forget" real in an append-only ledger.

A scope names what a key protects: `<subject id>` (the subject's transcripts and summaries)
or `<subject id>/<field>` (one profile field's values, conditions, quotes and rationales).
Deleting a scope's keys makes every ciphertext written under them unreadable for good; a
later write to the same scope gets a new key.

Adapters: `InMemoryKeyStore` (here: tests, the POPO ledger), `SqliteKeyStore` and
`PostgresKeyStore` (adapters/). Keys cannot be rebuilt from events: back the store up.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Collection
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


def new_key() -> tuple[str, bytes]:
    return uuid.uuid4().hex, os.urandom(KEY_BYTES)


class InMemoryKeyStore:
    """Keys in a dict, for tests and in-memory ledgers (gone at exit, like their events)."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[str, bytes]] = {}  # key id -> (scope, key)
        self._current: dict[str, str] = {}  # scope -> key id
        self._lock = threading.Lock()

    def current(self, scope: str) -> tuple[str, bytes]:
        with self._lock:
            key_id = self._current.get(scope)
            if key_id is None:
                key_id, key = new_key()
                self._keys[key_id] = (scope, key)
                self._current[scope] = key_id
            return key_id, self._keys[key_id][1]

    def key(self, key_id: str) -> bytes | None:
        found = self._keys.get(key_id)
        return None if found is None else found[1]

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        found = {key_id: self._keys.get(key_id) for key_id in key_ids}
        return {key_id: held[1] for key_id, held in found.items() if held is not None}

    def forget(self, scope: str) -> int:
        with self._lock:
            doomed = [kid for kid, (s, _) in self._keys.items() if s == scope]
            for kid in doomed:
                del self._keys[kid]
            self._current.pop(scope, None)
            return len(doomed)
