"""A subject's state as sealed bytes, and back.

The state holds decrypted personal content (values, conditions, quotes, transcripts' words),
so a snapshot is encrypted (AES-256-GCM) under its subject's own snapshot key, a `KeyStore`
scope that forgetting and erasure delete with the field's keys: a snapshot becomes unreadable
the moment the events it was built from are, and its stored bytes never show content.

Layout: `fl-snap:1:<layout>:<key id>:` then nonce and ciphertext of the zlib-compressed
pickle. The associated data binds the subject, the version and the layout, so a row moved to
another subject or version does not open. Pickle, because the state holds frozen dataclasses,
enums, sets and UUID-keyed maps the library's JSON transcoder cannot store; it is read only
after the authentication tag checked out, and only classes of the domain package (plus a few
standard value types) may appear in it.
"""

from __future__ import annotations

import copyreg
import dataclasses
import enum
import gc
import io
import operator
import os
import pickle
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any
from uuid import UUID, SafeUUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from factledger.application.ledger.ports import KeyStore
from factledger.application.ledger.snapshots.layout import domain_classes, state_layout

PREFIX = b"fl-snap:1:"
NONCE_BYTES = 12
# The library's own attributes, set from the snapshot row rather than kept in the blob.
_TRANSIENT = ("_pending_events",)
_ALLOWED_GLOBALS = frozenset(
    {
        ("datetime", "datetime"),
        ("datetime", "timezone"),
        ("datetime", "timedelta"),
        ("datetime", "date"),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("copyreg", "_reconstructor"),
        ("builtins", "object"),
    }
)


class UnreadableSnapshotError(Exception):
    """The snapshot cannot be used (forgotten key, other layout, damaged bytes); the load
    replays the stream instead. Carries no content."""


def snapshot_scope(subject_id: UUID) -> str:
    """The key scope of a subject's snapshots: `#` right after the subject id, where every
    other scope of the subject has `/`."""
    return f"{subject_id}#snapshot"


def seal(state: dict[str, Any], subject_id: UUID, version: int, keys: KeyStore) -> bytes:
    """The subject's `__dict__` (at `version`) as sealed bytes."""
    kept = {name: value for name, value in state.items() if name not in _TRANSIENT}
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _reducers()
    with gc_paused():
        pickler.dump(kept)
    plain = zlib.compress(buffer.getvalue(), 1)
    key_id, key = keys.current(snapshot_scope(subject_id))
    layout = state_layout()
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plain, _aad(subject_id, version, layout))
    return PREFIX + f"{layout}:{key_id}:".encode() + nonce + sealed


def unseal(blob: bytes, subject_id: UUID, version: int, keys: KeyStore) -> dict[str, Any]:
    """The state sealed by `seal`; `UnreadableSnapshotError` when it cannot be used."""
    if not blob.startswith(PREFIX):
        raise UnreadableSnapshotError("not a sealed snapshot")
    layout, key_id, rest = _split_header(blob[len(PREFIX) :])
    if layout != state_layout():
        raise UnreadableSnapshotError("written for another state layout")
    key = keys.key(key_id)
    if key is None:
        raise UnreadableSnapshotError("its key was forgotten")
    try:
        plain = AESGCM(key).decrypt(
            rest[:NONCE_BYTES], rest[NONCE_BYTES:], _aad(subject_id, version, layout)
        )
        with gc_paused():
            state = _DomainUnpickler(io.BytesIO(zlib.decompress(plain))).load()
    except (InvalidTag, zlib.error, pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise UnreadableSnapshotError("damaged") from exc
    if not isinstance(state, dict):
        raise UnreadableSnapshotError("damaged")
    return state


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off while tens of thousands of acyclic values are made: it would
    walk the whole heap again and again meanwhile (a 10,000-event state read 3-5x slower).
    Whoever turned it off turns it back on, so threads that overlap never leave it off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _split_header(rest: bytes) -> tuple[str, str, bytes]:
    parts = rest.split(b":", 2)
    if len(parts) != 3:
        raise UnreadableSnapshotError("damaged header")
    try:
        return parts[0].decode("ascii"), parts[1].decode("ascii"), parts[2]
    except UnicodeDecodeError as exc:
        raise UnreadableSnapshotError("damaged header") from exc


def _aad(subject_id: UUID, version: int, layout: str) -> bytes:
    return f"{subject_id}|{version}|{layout}".encode()


def restore(cls: type[object], values: tuple[Any, ...]) -> object:
    """A frozen, slotted domain value from its fields, without running its checks again (it
    passed them when its event was applied). The dataclasses' own `__setstate__` looks
    their fields up for every object, which made reading a large state 10x slower."""
    obj = object.__new__(cls)
    names = _FIELD_NAMES.get(cls) or _field_names(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


def restore_uuid(value: int) -> UUID:
    """A UUID from its integer (the standard reduction goes through `is_safe`, an enum)."""
    found = object.__new__(UUID)
    object.__setattr__(found, "int", value)
    object.__setattr__(found, "is_safe", SafeUUID.unknown)
    return found


def restore_member(cls: type[enum.Enum], value: object) -> enum.Enum:
    """An enum member by value, without the enum machinery's call."""
    return cls._value2member_map_[value]


_RESTORERS = frozenset({"restore", "restore_uuid", "restore_member"})


_FIELD_NAMES: dict[type[object], tuple[str, ...]] = {}


def _field_names(cls: type[object]) -> tuple[str, ...]:
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    return _FIELD_NAMES.setdefault(cls, names)


@cache
def _reducers() -> dict[type[object], Callable[[Any], Any]]:
    """How each frozen, slotted domain dataclass is pickled: its fields in one C-level fetch."""
    reducers: dict[type[object], Callable[[Any], Any]] = dict(copyreg.dispatch_table)
    reducers[UUID] = lambda u: (restore_uuid, (u.int,))
    for cls in domain_classes():
        if dataclasses.is_dataclass(cls) and hasattr(cls, "__slots__"):
            reducers[cls] = _reducer(cls, _field_names(cls))
        elif issubclass(cls, enum.Enum):
            reducers[cls] = lambda member: (restore_member, (type(member), member._value_))
    return reducers


def _reducer(cls: type[object], names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    fetch = operator.attrgetter(*names)
    if len(names) == 1:
        return lambda obj: (restore, (cls, (fetch(obj),)))
    return lambda obj: (restore, (cls, fetch(obj)))


class _DomainUnpickler(pickle.Unpickler):
    """Resolves only the domain's classes, `restore` and a few standard value types."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = module.startswith("factledger.domain.") or (module, name) in _ALLOWED_GLOBALS
        if allowed or (module == __name__ and name in _RESTORERS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"global {module}.{name} not allowed in a snapshot")
