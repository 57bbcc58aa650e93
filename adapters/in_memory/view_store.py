"""`InMemoryViewStore`: the view-store port (`application.ledger.ports`) in a dict."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from copy import deepcopy

from factledger.application.ledger.ports import PositionMovedError, ViewTransaction
from factledger.domain.values import JsonObject


class _MemoryTransaction:
    def __init__(self, docs: dict[tuple[str, str], JsonObject], position: int) -> None:
        self._docs = docs
        self._writes: dict[tuple[str, str], JsonObject | None] = {}
        self.start_position = position
        self.new_position = position

    def get(self, view: str, key: str) -> JsonObject | None:
        if (view, key) in self._writes:
            doc = self._writes[(view, key)]
        else:
            doc = self._docs.get((view, key))
        return None if doc is None else deepcopy(doc)

    def get_many(self, view: str, keys: Sequence[str]) -> dict[str, JsonObject]:
        found = {key: self.get(view, key) for key in keys}
        return {key: doc for key, doc in found.items() if doc is not None}

    def put(self, view: str, key: str, doc: JsonObject) -> None:
        self._writes[(view, key)] = deepcopy(doc)

    def put_each(self, addresses: Sequence[tuple[str, str]], doc: JsonObject) -> None:
        for view, key in addresses:
            self.put(view, key, doc)

    def delete(self, view: str, key: str) -> None:
        self._writes[(view, key)] = None

    def scan(self, view: str, prefix: str) -> list[tuple[str, JsonObject]]:
        keys = {k for (v, k) in self._docs if v == view and k.startswith(prefix)}
        keys |= {k for (v, k) in self._writes if v == view and k.startswith(prefix)}
        found = ((key, self.get(view, key)) for key in sorted(keys))
        return [(key, doc) for key, doc in found if doc is not None]

    def position(self) -> int:
        return self.new_position

    def advance(self, position: int) -> None:
        self.new_position = position

    def commit(self) -> None:
        for address, doc in self._writes.items():
            if doc is None:
                self._docs.pop(address, None)
            else:
                self._docs[address] = doc


class InMemoryViewStore:
    """A view store in a dict: for tests and the embedded default's in-process views."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._docs: dict[tuple[str, str], JsonObject] = {}
        self._position = 0
        # One writer at a time, as a database's row lock on the tracking row would give.
        self._lock = threading.RLock()

    @contextmanager
    def _transaction(self) -> Iterator[ViewTransaction]:
        with self._lock:
            txn = _MemoryTransaction(self._docs, self._position)
            yield txn
            if self._position != txn.start_position:
                raise PositionMovedError(self.name)
            txn.commit()
            self._position = txn.new_position

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        return self._transaction()

    @contextmanager
    def _read(self) -> Iterator[ViewTransaction]:
        # In process the lock is held for microseconds; nothing written here is committed.
        with self._lock:
            yield _MemoryTransaction(self._docs, self._position)

    def read(self) -> AbstractContextManager[ViewTransaction]:
        return self._read()

    def position(self) -> int:
        return self._position

    def drop(self) -> None:
        with self._lock:
            self._docs.clear()
            self._position = 0

    def close(self) -> None:
        """Nothing to release."""
