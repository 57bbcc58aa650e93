"""Which id a subject's reference names, derived under the deployment's key.

A new subject's id is `keyed_subject_id` of its reference under a key of the key store
(scope `~subject-ids`, never forgotten, shared by every process of the deployment), so the
id confirms no guessed reference, also after the subject's erasure. A subject registered
before keyed ids keeps its `legacy_subject_id`: the first generation's id is that one when a
subject holds it (one read, then a cache), the keyed one otherwise.

The key is created on first use, unless keyed ids already exist in the ledger: then it was
lost (a key store restored without it, or another one configured), and creating a new one
would silently give every known reference a new subject. That is refused with
`SubjectIdKeyLostError` (a 503 over HTTP) until the key store is restored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from uuid import UUID

from cachetools import LRUCache

from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.ports import KeyStore
from factledger.domain.subject import keyed_subject_id, legacy_subject_id

SUBJECT_ID_SCOPE = "~subject-ids"  # no subject's scope starts with `~`
RESOLVED_MAX = 100_000  # references whose first id this process knows: a few MB at most

Reference = tuple[str, str, str]  # tenant, kind, external reference


class SubjectIdKeyLostError(StoreUnavailableError):
    """The deployment's subject id key is not in the key store, though subjects were
    registered under it: restore the key store (from the backup taken with the ledger)."""


class SubjectIds:
    """Derives subject ids; safe across threads. `registered(id)` says whether a subject holds
    the id; `keyed_ids_exist()` whether any subject's id is a keyed one (a scan of the
    registrations, run only when the key store holds no key)."""

    def __init__(
        self,
        keys: KeyStore,
        *,
        registered: Callable[[UUID], bool],
        keyed_ids_exist: Callable[[], bool],
    ) -> None:
        self._keys = keys
        self._registered = registered
        self._keyed_ids_exist = keyed_ids_exist
        self._key: bytes | None = None
        self._lock = threading.Lock()
        self._first: LRUCache[Reference, UUID] = LRUCache(RESOLVED_MAX)

    def key(self) -> bytes:
        """The deployment's key: read once per process, created on the deployment's first use."""
        with self._lock:
            if self._key is not None:
                return self._key
        live = self._keys.live(SUBJECT_ID_SCOPE)
        if live is None:
            if self._keyed_ids_exist():
                raise SubjectIdKeyLostError(
                    "the key of subject ids is missing from the key store, though subjects were"
                    " registered under it: restore the key store; no subject is registered"
                    " until then"
                )
            # Concurrent first uses (other processes too) all end with the one key stored.
            live = self._keys.current(SUBJECT_ID_SCOPE)
        with self._lock:
            self._key = live[1]
            return self._key

    def first(self, tenant: str, kind: str, external_ref: str) -> UUID:
        """The id of the reference's first subject (registered or not yet): its legacy id
        when a subject holds that, else its keyed id. Blocks on a read when not cached."""
        reference = (tenant, kind, external_ref)
        known = self.known_first(*reference)
        if known is not None:
            return known
        legacy = legacy_subject_id(*reference)  # checks the reference first
        # No new subject ever gets a legacy id, so a reference without one never gains it:
        # either answer can be kept.
        subject_id = legacy if self._registered(legacy) else self.generation(*reference, 0)
        with self._lock:
            self._first[reference] = subject_id
        return subject_id

    def known_first(self, tenant: str, kind: str, external_ref: str) -> UUID | None:
        """`first` when this process has resolved it before; None otherwise. Never blocks."""
        with self._lock:
            return self._first.get((tenant, kind, external_ref))

    def generation(self, tenant: str, kind: str, external_ref: str, generation: int) -> UUID:
        """The keyed id of the reference's `generation`-th subject (0: the first)."""
        return keyed_subject_id(tenant, kind, external_ref, generation, self.key())
