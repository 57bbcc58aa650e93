"""Crypto-shredding mapper: personal payload fields are encrypted under deletable keys.

The event store keeps ids, versions, topics and structure in clear; the fields below are
stored as `fl-enc:1:<key id>:<base64 nonce+ciphertext>` (AES-256-GCM, bound to the event's
subject, topic and field name). When a key is gone the field reads back as None: events
still load, aggregates replay and projections rebuild, without the forgotten content.

Text recorded before NUL and lone surrogates were refused (`domain.text`) reads back with
them replaced by U+FFFD, so no response, view or backend write fails on an old event.

| event | fields | key scope |
| --- | --- | --- |
| SessionRecorded | transcript, summary | subject |
| ChangeProposed | value, condition, evidence, rationale | subject/field |
| ChangeConfirmed | evidence (the subject's confirming words), note (a reviewer's) | subject/field |
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import time
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from factledger.application import json_text
from factledger.application.ledger.key_store import KeyStore
from factledger.domain.events import ChangeConfirmed, ChangeProposed, SessionRecorded
from factledger.domain.text import scrub_json

PREFIX = "fl-enc:1:"
_PREFIX_LEN = len(PREFIX)
_SEALED_KEY_ID = re.compile(rb"fl-enc:1:([0-9a-f]+):")
# How JSON spells a NUL or a surrogate (ASCII JSON has no other way to hold them): only a
# payload that matches pays for a scrub.
_UNSAFE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
CACHE_TTL_S = 30.0
CACHE_SIZE = 10_000
ENCRYPTED_FIELDS: dict[type[object], tuple[str, ...]] = {
    SessionRecorded: ("transcript", "summary"),
    ChangeProposed: ("value", "condition", "evidence", "rationale"),
    ChangeConfirmed: ("evidence", "note"),
}


def scope_of(event_state: dict[str, Any], subject_id: object, cls: type[object]) -> str:
    """The key scope of an event's encrypted fields."""
    if issubclass(cls, SessionRecorded):
        return str(subject_id)
    return f"{subject_id}/{event_state['field']}"


def field_scope(subject_id: UUID, field: str) -> str:
    return f"{subject_id}/{field}"


_FIELDS_BY_CLASS: dict[type[object], tuple[str, ...]] = {}


def _fields_of(cls: type[object]) -> tuple[str, ...]:
    try:
        return _FIELDS_BY_CLASS[cls]
    except KeyError:
        found = next((f for base, f in ENCRYPTED_FIELDS.items() if issubclass(cls, base)), ())
        return _FIELDS_BY_CLASS.setdefault(cls, found)


class ShreddingMapper(Mapper[UUID]):
    """A library `Mapper` that encrypts `ENCRYPTED_FIELDS` with keys from a `KeyStore`."""

    def __init__(self, *args: Any, keys: KeyStore, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys = keys
        # Decryption keys by id, briefly: a subject of 100 events would otherwise cost 100
        # key-store queries per load. Bounds how long another process can still read a key
        # forgotten elsewhere; the forgetting process clears it at once.
        self._cache: dict[str, tuple[AESGCM, float]] = {}
        # Key ids found gone. Every key id in an event was stored before the event, and a
        # forget is final, so this stays true for good; a forgotten fact's fields would
        # otherwise ask the key store again at every read.
        self._gone: set[str] = set()

    def forget_cached(self) -> None:
        self._cache.clear()

    def _cipher(self, key_id: str) -> AESGCM | None:
        now = time.monotonic()
        hit = self._cache.get(key_id)
        if hit is not None and hit[1] > now:
            return hit[0]
        if key_id in self._gone:
            return None
        key = self.keys.key(key_id)
        if key is None:
            self._remember_gone([key_id])
            return None
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        cipher = AESGCM(key)
        self._cache[key_id] = (cipher, now + CACHE_TTL_S)
        return cipher

    def to_domain_events(
        self, stored_events: Sequence[StoredEvent]
    ) -> list[DomainEventProtocol[UUID]]:
        """`to_domain_event` of each, after reading the keys they need that are not cached in
        one key-store call (a page of a rebuild meets dozens of scopes it has not seen)."""
        self._prefetch(stored_events)
        # A page's events share few keys (a proposal's fields, a save's proposals): each key's
        # cipher is found once per page, not once per field.
        opened: dict[str, AESGCM | None] = {}
        return [self._decoded(stored, opened) for stored in stored_events]

    def _prefetch(self, stored_events: Sequence[StoredEvent]) -> None:
        now = time.monotonic()
        wanted = {
            key_id.decode()
            for stored in stored_events
            for key_id in _SEALED_KEY_ID.findall(stored.state)
        }
        missing = [
            key_id
            for key_id in wanted
            if key_id not in self._gone and not self._cached(key_id, now)
        ]
        if not missing:
            return
        found = self.keys.keys_by_id(missing)
        self._remember_gone([key_id for key_id in missing if key_id not in found])
        if len(self._cache) + len(found) > CACHE_SIZE:
            self._cache.clear()
        for key_id, key in found.items():
            self._cache[key_id] = (AESGCM(key), now + CACHE_TTL_S)

    def _remember_gone(self, key_ids: list[str]) -> None:
        if len(self._gone) + len(key_ids) > CACHE_SIZE:
            self._gone.clear()
        self._gone.update(key_ids)

    def _cached(self, key_id: str, now: float) -> bool:
        hit = self._cache.get(key_id)
        return hit is not None and hit[1] > now

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        cls = type(domain_event)
        fields = _fields_of(cls)
        if not fields:
            return super().to_stored_event(domain_event)
        state = dict(vars(domain_event))
        key_id, key = self.keys.current(scope_of(state, state["originator_id"], cls))
        for name in fields:
            if state[name] is not None:
                state[name] = _encrypt(key_id, key, state[name], _aad(state, cls, name))
        sealed = object.__new__(cls)
        object.__setattr__(sealed, "__dict__", state)
        return super().to_stored_event(sealed)

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        return self._decoded(stored_event, {})

    def _decoded(
        self, stored_event: StoredEvent, opened: dict[str, AESGCM | None]
    ) -> DomainEventProtocol[UUID]:
        """The library's event with its sealed fields opened; `opened` holds the ciphers this
        call has found so far (None: the key is gone)."""
        event = super().to_domain_event(stored_event)
        cls = type(event)
        state = vars(event)
        if _UNSAFE_ESCAPE.search(stored_event.state):
            for name, value in state.items():
                state[name] = scrub_json(value)
        # A rebuild opens every sealed field of the log (148,000 in the bench's 50,050
        # events): the loop below is the whole of that work, with no call per field but the
        # decryption's own. The associated data's prefix is formatted once per event.
        aad_prefix = ""
        for name in _FIELDS_BY_CLASS.get(cls) or _fields_of(cls):
            sealed = state.get(name)
            if not isinstance(sealed, str) or not sealed.startswith(PREFIX):
                continue
            aad_prefix = aad_prefix or f"{state['originator_id']}|{get_topic(cls)}|"
            key_id, _, blob = sealed[_PREFIX_LEN:].partition(":")
            try:
                cipher = opened[key_id]
            except KeyError:
                cipher = opened[key_id] = self._cipher(key_id)
            if cipher is None:
                state[name] = None  # forgotten: the content is gone for good
                continue
            raw = binascii.a2b_base64(blob)  # what `base64.b64decode` runs, without its checks
            try:
                plain = cipher.decrypt(raw[:12], raw[12:], (aad_prefix + name).encode())
            except InvalidTag:
                state[name] = None  # never ours to read (tampered or mis-keyed): as erased
                continue
            value = json_text.loads(plain)
            state[name] = scrub_json(value) if _UNSAFE_ESCAPE.search(plain) else value
        return event


def _aad(state: dict[str, Any], cls: type[object], name: str) -> bytes:
    return f"{state['originator_id']}|{get_topic(cls)}|{name}".encode()


def _encrypt(key_id: str, key: bytes, value: Any, aad: bytes) -> str:
    nonce = os.urandom(12)
    plain = json.dumps(value, sort_keys=True, default=str).encode()
    sealed = AESGCM(key).encrypt(nonce, plain, aad)
    return PREFIX + key_id + ":" + base64.b64encode(nonce + sealed).decode()
