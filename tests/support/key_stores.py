"""A key store that passes every call to another: tests that make one call fail override
only that call."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from uuid import UUID

from factledger.application.ledger.ports import KeyStore
from factledger.application.ledger.subject_ids import SUBJECT_ID_SCOPE
from factledger.domain.subject import keyed_subject_id


class DelegatingKeyStore:
    def __init__(self, inner: KeyStore) -> None:
        self.inner = inner

    def current(self, scope: str) -> tuple[str, bytes]:
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        return self.inner.current_many(scopes)

    def live(self, scope: str) -> tuple[str, bytes] | None:
        return self.inner.live(scope)

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


# The in-process harness's deployment key of subject ids: tests that build their runtime with
# `PinnedSubjectIdKeys` name a subject by `pinned_subject_id` before registering it. A served
# process (or a store of its own) has a random key: tests there read ids from the API.
PINNED_SUBJECT_ID_KEY = b"factledger-tests-subject-id-key!"


class PinnedSubjectIdKeys(DelegatingKeyStore):
    """Another key store, its key of subject ids set to `PINNED_SUBJECT_ID_KEY`."""

    def live(self, scope: str) -> tuple[str, bytes] | None:
        if scope == SUBJECT_ID_SCOPE:
            return ("pinned-subject-ids", PINNED_SUBJECT_ID_KEY)
        return self.inner.live(scope)

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        pinned = dict.fromkeys(scopes, ("pinned-subject-ids", PINNED_SUBJECT_ID_KEY))
        others = [s for s in scopes if s != SUBJECT_ID_SCOPE]
        found = self.inner.current_many(others) if others else {}
        return {s: found[s] if s in found else pinned[s] for s in scopes}


def pinned_subject_id(tenant: str, kind: str, ref: str) -> UUID:
    """The first subject's id of a reference in a runtime keyed by `PinnedSubjectIdKeys`."""
    return keyed_subject_id(tenant, kind, ref, 0, PINNED_SUBJECT_ID_KEY)
