"""A key store that passes every call to another: tests that make one call fail override
only that call."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from factledger.application.ledger.ports import KeyStore


class DelegatingKeyStore:
    def __init__(self, inner: KeyStore) -> None:
        self.inner = inner

    def current(self, scope: str) -> tuple[str, bytes]:
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        return self.inner.current_many(scopes)

    def key(self, key_id: str) -> bytes | None:
        return self.inner.key(key_id)

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        return self.inner.keys_by_id(key_ids)

    def forget(self, scope: str) -> int:
        return self.forget_many([scope])

    def forget_many(self, scopes: Collection[str]) -> int:
        return self.inner.forget_many(scopes)

    def forget_prefix(self, prefix: str) -> int:
        return self.inner.forget_prefix(prefix)

    def retire(self, scope: str, retired_scope: str) -> str | None:
        return self.inner.retire(scope, retired_scope)
