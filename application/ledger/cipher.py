"""Crypto-shredding mapper: personal payload fields are encrypted under deletable keys.

The event store keeps ids, versions, topics and structure in clear; the fields below are
stored as `fl-enc:1:<key id>:<base64 nonce+ciphertext>` (AES-256-GCM, bound to the event's
subject, topic and field name). When a key is gone the field reads back as None: events
still load, aggregates replay and projections rebuild, without the forgotten content.

Text recorded before NUL and lone surrogates were refused (`domain.text`) reads back with
them replaced by U+FFFD, so no response, view or backend write fails on an old event.

| event | fields | key scope |
| --- | --- | --- |
| SubjectRegistered | external_ref | subject |
| SessionRecorded | each message's text | its line |
| SessionRecorded | summary | the session's summary |
| SessionRecorded | fingerprint | subject |
| ChangeProposed | value, condition, evidence, rationale | the change |
| ChangeConfirmed | evidence (confirming words), note (a reviewer's) | subject/field, generation |
| ChangeRejected, FactForgotten, SubjectErased, FieldExpirySet | reason | subject |
| FactForgotten | kept (a list's items a forget of others left) | subject/field, next generation |

A proposed change has a key of its own (so a forgotten memory takes the pending changes that
quote its lines, and nothing else); changes proposed before that were sealed under their
field's key. A field's key has generations: each forget of the field names the generation it
shreds (with every earlier one) and deletes the keys of the changes it took; the field's
later words are sealed under the next generation, which the event records (`key_generation`).
Nothing saved between a forget's event and its key deletion is sealed under a key about to go.

A message's text is sealed on its own (the message's role, time and decision stay in clear),
so forgetting a field deletes the keys of the lines that stated it and nothing else; a line
whose key is gone reads back as `{"text": None, "forgotten": True, ...}`. Sessions recorded
before per-line keys hold their transcript as one ciphertext under the subject's key: they
still load, and a forget of one of their lines rotates that key (`SubjectKeyRotated`): where
a key is gone, the mapper reads the value a rotation sealed again (`ShreddingMapper.resealed`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from factledger.application import json_text
from factledger.application.ledger.ports import KeyStore
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    FactForgotten,
    FieldExpirySet,
    SessionRecorded,
    SubjectErased,
    SubjectRegistered,
)
from factledger.domain.text import scrub_json

KEY_BYTES = 32  # AES-256-GCM
PREFIX = "fl-enc:1:"
_PREFIX_LEN = len(PREFIX)
# How JSON spells a NUL or a surrogate (ASCII JSON has no other way to hold them): only a
# payload that matches pays for a scrub.
_UNSAFE_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
CACHE_TTL_S = 30.0
CACHE_SIZE = 10_000
TRANSCRIPT, SUMMARY = "transcript", "summary"
FORGOTTEN_LINE = "forgotten"  # set on a message whose key is gone
ENCRYPTED_FIELDS: dict[type[object], tuple[str, ...]] = {
    SubjectRegistered: ("external_ref",),
    SessionRecorded: (TRANSCRIPT, SUMMARY, "fingerprint"),
    ChangeProposed: ("value", "condition", "evidence", "rationale"),
    ChangeConfirmed: ("evidence", "note"),
    ChangeRejected: ("reason",),
    FactForgotten: ("reason", "kept"),
    SubjectErased: ("reason",),
    FieldExpirySet: ("reason",),
}
_FIELD_SCOPED: tuple[type[object], ...] = (ChangeConfirmed,)
# Read when a key is gone: the subject's key rotations (version, field) -> the value sealed
# again, latest first (see `SubjectKeyRotated`).
Resealed = Mapping[tuple[int, str], Any]
_ABSENT = object()
# The fields a rotation of the subject's key may have sealed again: those under the subject's
# key, and a session's transcript and summary stored whole under it before per-line keys.
ROTATED_FIELDS = frozenset({"external_ref", "fingerprint", "reason", TRANSCRIPT, SUMMARY})


def subject_scope(subject_id: object) -> str:
    return str(subject_id)


def field_scope(subject_id: UUID, field: str, generation: int = 0) -> str:
    """The scope of one generation of a field's key. Generation 0 is the field's scope from
    before generations (unchanged, so old ledgers keep their keys); a later one adds `#<n>`,
    which no field name holds."""
    if generation < 0:
        raise ValueError("generation: 0 or more")
    return f"{subject_id}/{field}" if generation == 0 else f"{subject_id}/{field}#{generation}"


def field_scopes_through(subject_id: UUID, field: str, generation: int) -> list[str]:
    """The scopes of generations 0 to `generation` of a field's key: what a forget naming
    `generation` shreds. Earlier generations were shredded by earlier forgets (deleting a
    deleted key is a no-op), or hold words sealed before generations were recorded."""
    return [field_scope(subject_id, field, g) for g in range(generation + 1)]


def change_scope(subject_id: object, change_id: object) -> str:
    """One proposed change's scope (its value, condition, quote and rationale): a forget of
    its field deletes it with the field's, and a forgotten memory whose line it quotes
    deletes it alone. `~` never starts a field's name."""
    return f"{subject_id}/~change/{change_id}"


def line_scope(subject_id: object, session_id: str, index: int) -> str:
    """One transcript message's scope; `~` never starts a field's name, and the index after
    the last `#` keeps two sessions' scopes apart whatever their ids hold."""
    return f"{subject_id}/~line/{session_id}#{index}"


def fingerprint_scope(subject_id: object) -> str:
    """The scope of the key a subject's session fingerprints are HMACs under: a scope of its
    own, never rotated (a rotation of the subject's key would change every fingerprint, and
    retries of sessions recorded before it would conflict), deleted with the subject's other
    keys at erasure, after which no fingerprint can be computed again. `~` never starts a
    field's name."""
    return f"{subject_id}/~fingerprint"


def summary_scope(subject_id: object, session_id: str) -> str:
    return f"{subject_id}/~summary/{session_id}"


def scope_of(event_state: dict[str, Any], subject_id: object, cls: type[object]) -> str:
    """The key scope of an event's encrypted fields (a session's summary and lines have their
    own: `summary_scope`, `line_scope`)."""
    if issubclass(cls, ChangeProposed):
        return change_scope(subject_id, event_state["change_id"])
    if issubclass(cls, _FIELD_SCOPED):
        generation = event_state.get("key_generation") or 0
        return field_scope(cast("UUID", subject_id), str(event_state["field"]), int(generation))
    return subject_scope(subject_id)


def _scopes_of(state: dict[str, Any], cls: type[object]) -> dict[str, str]:
    """Each sealed field's scope (`transcript#<i>` for message i)."""
    subject = state["originator_id"]
    if issubclass(cls, FactForgotten):
        return _forget_scopes(state, subject)
    if not issubclass(cls, SessionRecorded):
        scope = scope_of(state, subject, cls)
        return dict.fromkeys(_fields_of(cls), scope)
    session_id = str(state["session_id"])
    scopes = {
        SUMMARY: summary_scope(subject, session_id),
        "fingerprint": subject_scope(subject),
    }
    for index, _ in enumerate(state.get(TRANSCRIPT) or []):
        scopes[f"{TRANSCRIPT}#{index}"] = line_scope(subject, session_id, index)
    return scopes


def _forget_scopes(state: dict[str, Any], subject: Any) -> dict[str, str]:
    """A forget's reason is the subject's; the items it kept are the field's words from then
    on, sealed under the generation after the one it shreds (ADR 0160)."""
    scopes = {"reason": subject_scope(subject)}
    if state.get("kept") is not None and state.get("field") is not None:
        generation = int(state.get("key_generation") or 0) + 1
        scopes["kept"] = field_scope(cast("UUID", subject), str(state["field"]), generation)
    return scopes


def session_scopes(subject_id: object, session_id: str, lines: int) -> list[str]:
    """The scopes a session's record is sealed under: its summary's and each line's."""
    return [
        summary_scope(subject_id, session_id),
        *(line_scope(subject_id, session_id, index) for index in range(lines)),
    ]


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
        # The subject's rotations (`SubjectKeyRotated`), read from its stream when a field the
        # subject's key sealed meets a key that is gone; set by the ledger.
        self.resealed_of: Callable[[UUID], Resealed] | None = None
        # subject -> its rotations as read, and the gone key ids they were read for: a key
        # goes after its rotation is recorded, so a read made once it was gone is complete.
        self._rotations: dict[UUID, tuple[Resealed, set[str]]] = {}

    def forget_cached(self) -> None:
        self._cache.clear()
        self._rotations.clear()

    def resealed(self, subject_id: UUID, version: int, name: str, key_id: str) -> Any:
        """What a rotation sealed again for this field, found because `key_id` is gone;
        `_ABSENT` when none did."""
        if self.resealed_of is None or name not in ROTATED_FIELDS:
            return _ABSENT
        hit = self._rotations.get(subject_id)
        if hit is None or key_id not in hit[1]:
            checked = set() if hit is None else hit[1]
            if len(self._rotations) >= CACHE_SIZE:
                self._rotations.clear()
            hit = self._rotations[subject_id] = (self.resealed_of(subject_id), {*checked, key_id})
        return hit[0].get((version, name), _ABSENT)

    def stored_state(self, stored: StoredEvent) -> dict[str, Any]:
        """The stored event's state as stored: sealed fields left sealed."""
        data = stored.state
        if self.cipher is not None:
            data = self.cipher.decrypt(data)
        if self.compressor is not None:
            data = self.compressor.decompress(data)
        state: dict[str, Any] = self.transcoder.decode(data)
        return state

    def lines_not_alone(self, stored: StoredEvent) -> tuple[str, frozenset[int] | None] | None:
        """For a stored `SessionRecorded`: its session id and the lines whose words no key of
        their own seals, so deleting line keys cannot take them: None when the whole
        transcript is one ciphertext under the subject's key (stored before per-line keys;
        a rotation of that key takes it), else the indexes of lines stored in clear. None for any
        other event. Reads the stored state only: nothing is decrypted."""
        if stored.topic != SessionRecorded.TOPIC:
            return None
        state = self.stored_state(stored)
        lines = state.get(TRANSCRIPT)
        session_id = str(state["session_id"])
        if isinstance(lines, str):
            return session_id, None
        in_clear = frozenset(
            index
            for index, line in enumerate(lines if isinstance(lines, list) else [])
            if isinstance(line, dict)
            and isinstance(text := line.get("text"), str)
            and not text.startswith(PREFIX)
        )
        return session_id, in_clear

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
        self, stored_events: Sequence[StoredEvent], *, transcript_text: bool = True
    ) -> list[DomainEventProtocol[UUID]]:
        """`to_domain_event` of each, after reading the keys they need that are not cached in
        one key-store call (a page of a rebuild meets dozens of scopes it has not seen).

        With `transcript_text=False` a recorded session's messages keep their texts as stored
        (sealed; a line without a key of its own as it was written) and no line key is read:
        for a reader of everything but the words (the profile and review-queue views count a
        session's lines), opening them was most of the cost of a long transcript."""
        events = [super(ShreddingMapper, self).to_domain_event(s) for s in stored_events]
        self._prefetch(events, lines=transcript_text)
        # A page's events share few keys (a proposal's fields, a save's proposals): each key's
        # cipher is found once per page, not once per field.
        opened: dict[str, AESGCM | None] = {}
        return [
            self._opened(event, stored.state, opened, lines=transcript_text)
            for event, stored in zip(events, stored_events, strict=True)
        ]

    def _prefetch(self, events: Sequence[DomainEventProtocol[UUID]], *, lines: bool) -> None:
        now = time.monotonic()
        wanted = {
            key_id
            for event in events
            for key_id in _sealed_key_ids(vars(event), type(event), lines=lines)
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
        return self.to_stored_events([domain_event])[0]

    def to_stored_events(
        self, domain_events: Sequence[DomainEventProtocol[UUID]]
    ) -> list[StoredEvent]:
        """`to_stored_event` of each, with the current keys of all their scopes read in one
        key-store call (a review's proposals each have a scope of their own)."""
        states = [dict(vars(e)) if _fields_of(type(e)) else None for e in domain_events]
        scopes = [
            {} if state is None else _scopes_of(state, type(event))
            for event, state in zip(domain_events, states, strict=True)
        ]
        wanted = list(dict.fromkeys(scope for found in scopes for scope in found.values()))
        keys = self.keys.current_many(wanted) if wanted else {}
        return [
            super(ShreddingMapper, self).to_stored_event(event)
            if state is None
            else self._sealed(state, type(event), found, keys)
            for event, state, found in zip(domain_events, states, scopes, strict=True)
        ]

    def _sealed(
        self,
        state: dict[str, Any],
        cls: type[DomainEventProtocol[UUID]],
        scopes: dict[str, str],
        keys: Mapping[str, tuple[str, bytes]],
    ) -> StoredEvent:
        """The stored event of `state` (an event of class `cls`) with its fields sealed under
        their scopes' `keys`."""
        for name, scope in scopes.items():
            key_id, key = keys[scope]
            if name.startswith(f"{TRANSCRIPT}#"):
                continue
            if state.get(name) is not None:
                state[name] = _encrypt(key_id, key, state[name], _aad(state, cls, name))
        if isinstance(state.get(TRANSCRIPT), list):
            state[TRANSCRIPT] = [
                _sealed_line(message, keys[scopes[f"{TRANSCRIPT}#{index}"]], state, cls, index)
                for index, message in enumerate(state[TRANSCRIPT])
            ]
        sealed = object.__new__(cls)
        object.__setattr__(sealed, "__dict__", state)
        return super().to_stored_event(sealed)

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        event = super().to_domain_event(stored_event)
        return self._opened(event, stored_event.state, {}, lines=True)

    def _opened(
        self,
        event: DomainEventProtocol[UUID],
        stored_state: bytes,
        opened: dict[str, AESGCM | None],
        *,
        lines: bool,
    ) -> DomainEventProtocol[UUID]:
        """The library's `event` (decoded from `stored_state`) with its sealed fields opened,
        and its transcript's lines too if `lines`; `opened` holds the ciphers this call has
        found so far (None: the key is gone)."""
        cls = type(event)
        state = vars(event)
        if _UNSAFE_ESCAPE.search(stored_state):
            for name, value in state.items():
                state[name] = scrub_json(value)
        # A rebuild opens every sealed field of the log (148,000 in the bench's 50,050
        # events): the loop below is the whole of that work, with no call per field but the
        # decryption's own. The associated data's prefix is formatted once per event.
        aad_prefix = ""
        # A summary has a key of its own unless its transcript was sealed whole with it (under
        # the subject's key): only then may a rotation have sealed it again.
        whole = isinstance(state.get(TRANSCRIPT), str)
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
                rotated = whole or name != SUMMARY
                state[name] = (
                    self._rotated(state, name, key_id, aad_prefix, opened) if rotated else None
                )
                continue
            raw = binascii.a2b_base64(blob)  # what `base64.b64decode` runs, without its checks
            try:
                plain = cipher.decrypt(raw[:12], raw[12:], (aad_prefix + name).encode())
            except InvalidTag:
                state[name] = None  # never ours to read (tampered or mis-keyed): as erased
                continue
            value = json_text.loads(plain)
            state[name] = scrub_json(value) if _UNSAFE_ESCAPE.search(plain) else value
        messages = state.get(TRANSCRIPT)
        if lines and isinstance(messages, list) and issubclass(cls, SessionRecorded):
            aad_prefix = aad_prefix or f"{state['originator_id']}|{get_topic(cls)}|"
            state[TRANSCRIPT] = [
                self._opened_line(line, index, aad_prefix, opened)
                for index, line in enumerate(messages)
            ]
        return event

    def _rotated(
        self,
        state: dict[str, Any],
        name: str,
        key_id: str,
        aad_prefix: str,
        opened: dict[str, AESGCM | None],
    ) -> Any:
        """A field whose key is gone: forgotten (None), unless a rotation of the subject's key
        sealed it again first (then that value, opened: a transcript's lines are opened with
        the event's other lines)."""
        subject = state["originator_id"]
        subject_id = subject if isinstance(subject, UUID) else UUID(str(subject))
        again = self.resealed(subject_id, int(state["originator_version"]), name, key_id)
        if again is _ABSENT or again is None or isinstance(again, list):
            return None if again is _ABSENT else again
        if not isinstance(again, str) or not again.startswith(PREFIX):
            return None
        new_id, _, blob = again[_PREFIX_LEN:].partition(":")
        try:
            cipher = opened[new_id]
        except KeyError:
            cipher = opened[new_id] = self._cipher(new_id)
        if cipher is None:
            return None
        raw = binascii.a2b_base64(blob)
        try:
            plain = cipher.decrypt(raw[:12], raw[12:], (aad_prefix + name).encode())
        except InvalidTag:
            return None
        value = json_text.loads(plain)
        return scrub_json(value) if _UNSAFE_ESCAPE.search(plain) else value

    def _opened_line(
        self, line: Any, index: int, aad_prefix: str, opened: dict[str, AESGCM | None]
    ) -> Any:
        """A message with its text opened, or marked forgotten when the line's key is gone."""
        if not isinstance(line, dict):
            return line
        sealed = line.get("text")
        if not isinstance(sealed, str) or not sealed.startswith(PREFIX):
            return line  # stored before per-line keys: opened with the whole transcript
        key_id, _, blob = sealed[_PREFIX_LEN:].partition(":")
        try:
            cipher = opened[key_id]
        except KeyError:
            cipher = opened[key_id] = self._cipher(key_id)
        text: Any = None
        if cipher is not None:
            raw = binascii.a2b_base64(blob)
            aad = f"{aad_prefix}{TRANSCRIPT}#{index}".encode()
            try:
                plain = cipher.decrypt(raw[:12], raw[12:], aad)
            except InvalidTag:
                plain = None  # never ours to read (tampered or mis-keyed): as forgotten
            if plain is not None:
                text = json_text.loads(plain)
                text = scrub_json(text) if _UNSAFE_ESCAPE.search(plain) else text
        if text is None:
            return {**line, "text": None, FORGOTTEN_LINE: True}
        return {**line, "text": text}


def _key_id(value: object) -> str | None:
    """The key id of a sealed value; None for anything else."""
    if not isinstance(value, str) or not value.startswith(PREFIX):
        return None
    return value[_PREFIX_LEN:].partition(":")[0]


def _sealed_key_ids(state: dict[str, Any], cls: type[object], *, lines: bool) -> Iterator[str]:
    """The key ids of a decoded event's sealed fields, and of its transcript's lines if
    `lines`. An event other than a session or a forget seals all its fields under one scope's
    key (`_scopes_of`), so its first sealed field names the key of all: a rebuild's page
    asked this of each of a proposal's four fields. (Were another field's key ever different,
    it would be read when that field is opened: `ShreddingMapper._cipher`.)"""
    one_key = not issubclass(cls, SessionRecorded | FactForgotten)
    for name in _FIELDS_BY_CLASS.get(cls) or _fields_of(cls):
        if (key_id := _key_id(state.get(name))) is not None:
            yield key_id
            if one_key:
                return
    messages = state.get(TRANSCRIPT)
    if lines and isinstance(messages, list):
        for line in messages:
            if isinstance(line, dict) and (key_id := _key_id(line.get("text"))) is not None:
                yield key_id


def _aad(state: dict[str, Any], cls: type[object], name: str) -> bytes:
    return f"{state['originator_id']}|{get_topic(cls)}|{name}".encode()


def _sealed_line(
    message: Any,
    key: tuple[str, bytes],
    state: dict[str, Any],
    cls: type[object],
    index: int,
) -> Any:
    """The message with its text sealed under the line's own key."""
    if not isinstance(message, dict) or message.get("text") is None:
        return message
    aad = _aad(state, cls, f"{TRANSCRIPT}#{index}")
    return {**message, "text": _encrypt(key[0], key[1], message["text"], aad)}


def _encrypt(key_id: str, key: bytes, value: Any, aad: bytes) -> str:
    nonce = os.urandom(12)
    plain = json.dumps(value, sort_keys=True, default=str).encode()
    sealed = AESGCM(key).encrypt(nonce, plain, aad)
    return PREFIX + key_id + ":" + base64.b64encode(nonce + sealed).decode()


def sealed_again(
    key: tuple[str, bytes], value: Any, event_state: dict[str, Any], cls: type[object], name: str
) -> str:
    """`value` of an event's field sealed under `key`, bound to that event as its first seal
    was (a rotation of the subject's key seals again what the retired key sealed)."""
    return _encrypt(key[0], key[1], value, _aad(event_state, cls, name))


def line_sealed_again(
    message: Any, key: tuple[str, bytes], event_state: dict[str, Any], cls: type[object], index: int
) -> Any:
    """A message of a session's transcript (`cls`: its event's class) sealed under its line's
    key, as a session recorded with per-line keys holds it."""
    return _sealed_line(message, key, event_state, cls, index)


def new_key() -> tuple[str, bytes]:
    """A fresh `(key id, key)` for a key store to keep under a scope."""
    return uuid.uuid4().hex, os.urandom(KEY_BYTES)
