"""`KeyStore` in a dict: for tests and in-memory ledgers (gone at exit, like their events)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence

from factledger.application.ledger.cipher import new_key


class InMemoryKeyStore:
    """Keys of one in-memory ledger; never a default: the composition root chooses it."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[str, bytes]] = {}  # key id -> (scope, key)
        self._current: dict[str, str] = {}  # scope -> key id
        self._lock = threading.Lock()

    def current(self, scope: str) -> tuple[str, bytes]:
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        found: dict[str, tuple[str, bytes]] = {}
        with self._lock:
            for scope in scopes:
                key_id = self._current.get(scope)
                if key_id is None:
                    key_id, key = new_key()
                    self._keys[key_id] = (scope, key)
                    self._current[scope] = key_id
                found[scope] = (key_id, self._keys[key_id][1])
        return found

    def live(self, scope: str) -> tuple[str, bytes] | None:
        with self._lock:
            key_id = self._current.get(scope)
            return None if key_id is None else (key_id, self._keys[key_id][1])

    def key(self, key_id: str) -> bytes | None:
        found = self._keys.get(key_id)
        return None if found is None else found[1]

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        found = {key_id: self._keys.get(key_id) for key_id in key_ids}
        return {key_id: held[1] for key_id, held in found.items() if held is not None}

    def forget(self, scope: str) -> int:
        return self.forget_many([scope])

    def forget_many(self, scopes: Collection[str]) -> int:
        doomed_scopes = set(scopes)
        return self._forget_where(lambda scope: scope in doomed_scopes)

    def forget_prefix(self, prefix: str) -> int:
        return self._forget_where(lambda scope: scope.startswith(prefix))

    def retire(self, scope: str, retired_scope: str) -> str | None:
        with self._lock:
            key_id = self._current.pop(scope, None)
            if key_id is not None:
                self._keys[key_id] = (retired_scope, self._keys[key_id][1])
            return key_id

    def _forget_where(self, doomed: Callable[[str], bool]) -> int:
        with self._lock:
            gone = [kid for kid, (scope, _) in self._keys.items() if doomed(scope)]
            for kid in gone:
                scope = self._keys.pop(kid)[0]
                self._current.pop(scope, None)
            return len(gone)
