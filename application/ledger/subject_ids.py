"""Which id a subject's reference names, derived under the deployment's key.

A new subject's id is `keyed_subject_id` of its reference under a key of the key store
(scope `~subject-ids`, never forgotten, shared by every process of the deployment), so the
id confirms no guessed reference, also after the subject's erasure. A subject registered
before keyed ids keeps its `legacy_subject_id`: the first generation's id is that one when a
subject holds it (one read, then a cache), the keyed one otherwise.

A deployment whose log held no subject when its key was created can hold no legacy id (no
new subject ever gets one): the key's creation then also stores a second key, scope
`~subject-ids-keyed-only`, whose presence says so, and a process that finds it never reads
the ledger for a reference's legacy id (ADR 0096). A deployment that held subjects when its
key was created (registered before keyed ids, or by processes of a version before them) never
gets it, and keeps that read.

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
# Present (a key nothing is sealed under): the log held no subject when the id key was made.
KEYED_ONLY_SCOPE = "~subject-ids-keyed-only"
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
        any_registered: Callable[[], bool],
    ) -> None:
        self._keys = keys
        self._registered = registered
        self._keyed_ids_exist = keyed_ids_exist
        self._any_registered = any_registered
        self._key: bytes | None = None
        self._legacy_possible = True  # until `key()` reads otherwise
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
            keyed_only = not self._any_registered()
            # Concurrent first uses (other processes too) all end with the one key stored.
            live = self._keys.current(SUBJECT_ID_SCOPE)
            # After the id key: a start that stops between the two keeps the legacy reads.
            if keyed_only:
                self._keys.current(KEYED_ONLY_SCOPE)
        else:
            keyed_only = self._keys.live(KEYED_ONLY_SCOPE) is not None
        with self._lock:
            self._key, self._legacy_possible = live[1], not keyed_only
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
        if self._may_hold_legacy_ids() and self._registered(legacy):
            subject_id = legacy
        else:
            subject_id = self.generation(*reference, 0)
        with self._lock:
            self._first[reference] = subject_id
        return subject_id

    def _may_hold_legacy_ids(self) -> bool:
        """False once the key's read (`key`) found the deployment began with keyed ids. A key
        store that fails, or a lost key, leaves the legacy read to answer as it did before:
        a legacy subject still resolves, and a keyed id raises the error when derived."""
        try:
            self.key()
        except StoreUnavailableError:
            return True
        with self._lock:
            return self._legacy_possible

    def known_first(self, tenant: str, kind: str, external_ref: str) -> UUID | None:
        """`first` when this process has resolved it before; None otherwise. Never blocks."""
        with self._lock:
            return self._first.get((tenant, kind, external_ref))

    def derived_now(self, tenant: str, kind: str, external_ref: str) -> UUID | None:
        """`first` when it needs no read: resolved before, or derived where this process holds
        the key of a deployment that can hold no legacy id (an HMAC, microseconds). None when
        `first` would read; never blocks, so async callers need no thread for it."""
        reference = (tenant, kind, external_ref)
        with self._lock:
            known = self._first.get(reference)
            key, legacy_possible = self._key, self._legacy_possible
        if known is not None:
            return known
        if key is None or legacy_possible:
            return None
        subject_id = keyed_subject_id(tenant, kind, external_ref, 0, key)
        with self._lock:
            self._first[reference] = subject_id
        return subject_id

    def generation(self, tenant: str, kind: str, external_ref: str, generation: int) -> UUID:
        """The keyed id of the reference's `generation`-th subject (0: the first)."""
        return keyed_subject_id(tenant, kind, external_ref, generation, self.key())
