"""The snapshot codec: what it refuses to read, and when a snapshot is due."""

from __future__ import annotations

import io
import os
import pickle
import zlib
from datetime import UTC, datetime
from uuid import uuid4

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.snapshots import layout
from factledger.application.ledger.snapshots.codec import (
    PREFIX,
    UnreadableSnapshotError,
    seal,
    snapshot_scope,
    unseal,
)
from factledger.application.ledger.snapshots.layout import state_layout
from factledger.application.ledger.snapshots.store import is_due
from factledger.domain.subject import Subject, keyed_subject_id

KEY = b"k" * 32  # a deployment key of subject ids

AT = datetime(2026, 1, 5, tzinfo=UTC)


def test_a_sealed_state_reads_back_equal() -> None:
    keys = InMemoryKeyStore()
    subject = Subject.register(
        "acme", "lead", "ref-1", at=AT, subject_id=keyed_subject_id("acme", "lead", "ref-1", 0, KEY)
    )
    blob = seal(vars(subject), subject.id, 1, keys)

    state = unseal(blob, subject.id, 1, keys)

    assert state == {k: v for k, v in vars(subject).items() if k != "_pending_events"}
    assert b"ref-1" not in blob


def test_a_forgotten_snapshot_key_makes_the_snapshot_unreadable() -> None:
    keys = InMemoryKeyStore()
    subject = Subject.register(
        "acme", "lead", "ref-2", at=AT, subject_id=keyed_subject_id("acme", "lead", "ref-2", 0, KEY)
    )
    blob = seal(vars(subject), subject.id, 1, keys)
    keys.forget(snapshot_scope(subject.id))

    with pytest.raises(UnreadableSnapshotError, match="forgotten"):
        unseal(blob, subject.id, 1, keys)


def test_the_same_bytes_do_not_open_at_another_version() -> None:
    keys = InMemoryKeyStore()
    subject = Subject.register(
        "acme", "lead", "ref-3", at=AT, subject_id=keyed_subject_id("acme", "lead", "ref-3", 0, KEY)
    )
    blob = seal(vars(subject), subject.id, 1, keys)

    with pytest.raises(UnreadableSnapshotError, match="damaged"):
        unseal(blob, subject.id, 2, keys)


class _Smuggled:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.getenv, ("HOME",))


def test_a_snapshot_naming_a_class_outside_the_domain_is_refused() -> None:
    """Even sealed with the right key (a bug, or a key that leaked), a pickle that names any
    other global is refused before it can call it."""
    keys = InMemoryKeyStore()
    subject_id = uuid4()
    key_id, key = keys.current(snapshot_scope(subject_id))
    buffer = io.BytesIO()
    pickle.dump({"payload": _Smuggled()}, buffer)
    nonce = os.urandom(12)
    layout = state_layout()
    aad = f"{subject_id}|1|{layout}".encode()
    sealed = AESGCM(key).encrypt(nonce, zlib.compress(buffer.getvalue()), aad)
    blob = PREFIX + f"{layout}:{key_id}:".encode() + nonce + sealed

    with pytest.raises(UnreadableSnapshotError, match="damaged"):
        unseal(blob, subject_id, 1, keys)


def test_the_layout_changes_when_a_domain_class_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    before = state_layout()
    layout.state_layout.cache_clear()
    monkeypatch.setattr(layout, "CODEC_VERSION", layout.CODEC_VERSION + 1)
    try:
        assert layout.state_layout() != before
    finally:
        layout.state_layout.cache_clear()


@pytest.mark.parametrize(
    ("before", "after", "due"),
    [(98, 99, False), (99, 100, True), (97, 103, True), (100, 101, False), (0, 1, False)],
)
def test_a_snapshot_is_due_when_a_save_crosses_a_multiple(
    before: int, after: int, *, due: bool
) -> None:
    assert is_due(100, before=before, after=after) is due


def test_no_snapshot_is_due_when_they_are_off() -> None:
    assert not is_due(0, before=99, after=100)
