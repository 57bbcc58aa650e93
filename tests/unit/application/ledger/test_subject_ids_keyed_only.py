"""`SubjectIds` reads a reference's legacy id only where a legacy subject can exist: not on a
deployment whose log held no subject when its id key was made (ADR 0096); a deployment that
held subjects then, or whose key store fails, keeps the read and finds its legacy subjects."""

from __future__ import annotations

from uuid import UUID

import pytest

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.ports import KeyStoreUnavailableError
from factledger.application.ledger.subject_ids import (
    KEYED_ONLY_SCOPE,
    SUBJECT_ID_SCOPE,
    SubjectIds,
)
from factledger.domain.subject import legacy_subject_id

REF = ("t1", "lead", "crm-1")


class Log:
    """The ledger's side: which ids hold a subject, and the reads of them."""

    def __init__(self, *registered: UUID) -> None:
        self.registered = set(registered)
        self.reads: list[UUID] = []

    def holds(self, subject_id: UUID) -> bool:
        self.reads.append(subject_id)
        return subject_id in self.registered

    def ids(self, keys: InMemoryKeyStore) -> SubjectIds:
        return SubjectIds(
            keys,
            registered=self.holds,
            keyed_ids_exist=lambda: False,
            any_registered=lambda: bool(self.registered),
        )


def test_a_deployment_that_began_with_keyed_ids_never_reads_a_legacy_id() -> None:
    keys, log = InMemoryKeyStore(), Log()
    subject_id = log.ids(keys).first(*REF)
    assert subject_id.version == 8
    assert log.reads == []
    assert keys.live(KEYED_ONLY_SCOPE) is not None
    # Another process of the deployment finds the key and its mark: no read there either.
    assert log.ids(keys).first(*REF) == subject_id
    assert log.reads == []


def test_a_deployment_with_subjects_before_its_key_keeps_finding_legacy_ones() -> None:
    legacy = legacy_subject_id(*REF)
    keys, log = InMemoryKeyStore(), Log(legacy)
    assert log.ids(keys).first(*REF) == legacy
    assert keys.live(SUBJECT_ID_SCOPE) is not None
    assert keys.live(KEYED_ONLY_SCOPE) is None
    # Its next processes read the legacy id as before.
    assert log.ids(keys).first(*REF) == legacy
    assert log.ids(keys).first("t1", "lead", "crm-2").version == 8
    assert legacy_subject_id("t1", "lead", "crm-2") in log.reads


class FailingKeys(InMemoryKeyStore):
    def live(self, scope: str) -> tuple[str, bytes] | None:
        raise KeyStoreUnavailableError("down")


def test_a_failing_key_store_still_finds_a_legacy_subject() -> None:
    legacy = legacy_subject_id(*REF)
    log = Log(legacy)
    ids = log.ids(FailingKeys())
    assert ids.first(*REF) == legacy
    with pytest.raises(KeyStoreUnavailableError):
        ids.first("t1", "lead", "crm-2")


def test_an_id_is_derived_without_a_read_only_where_first_would_not_read() -> None:
    keys, log = InMemoryKeyStore(), Log()
    ids = log.ids(keys)
    # Before the key is read, `first` would read the key store: no id without it.
    assert ids.derived_now(*REF) is None
    derived_first = ids.first(*REF)
    fresh = log.ids(keys)
    fresh.key()

    assert fresh.derived_now("t1", "lead", "crm-2") == log.ids(keys).first("t1", "lead", "crm-2")
    assert fresh.derived_now(*REF) == derived_first
    assert log.reads == []


def test_no_id_is_derived_without_a_read_where_a_legacy_subject_may_hold_it() -> None:
    legacy = legacy_subject_id(*REF)
    keys, log = InMemoryKeyStore(), Log(legacy)
    ids = log.ids(keys)
    ids.key()

    assert ids.derived_now("t1", "lead", "crm-2") is None
    # Once `first` has read it, the answer is known and given without a read.
    assert ids.first(*REF) == legacy
    assert ids.derived_now(*REF) == legacy
