"""A subject's id: keyed under the deployment's key for every generation of a reference,
deterministic per key, and neither the reference's name-based uuid5 nor derivable without
the key; the legacy uuid5 is kept only to find subjects registered before."""

from __future__ import annotations

from uuid import NAMESPACE_URL, uuid5

import pytest

from factledger.domain.errors import InvalidReferenceError
from factledger.domain.subject import (
    SUBJECT_NAMESPACE,
    Subject,
    is_keyed,
    keyed_subject_id,
    legacy_subject_id,
)
from factledger.testing.subject_builders import T0

KEY, OTHER_KEY = b"k" * 32, b"o" * 32


def test_the_id_is_deterministic_per_key_and_generation() -> None:
    first = keyed_subject_id("acme", "lead", "crm-1", 0, KEY)
    assert first == keyed_subject_id("acme", "lead", "crm-1", 0, KEY)
    assert first.version == 8
    assert is_keyed(first)
    assert first != keyed_subject_id("acme", "lead", "crm-1", 1, KEY)
    assert keyed_subject_id("acme", "lead", "crm-1", 1, KEY) != keyed_subject_id(
        "acme", "lead", "crm-1", 2, KEY
    )
    # Another deployment's key gives another id: the reference alone names nothing.
    assert first != keyed_subject_id("acme", "lead", "crm-1", 0, OTHER_KEY)
    assert first != keyed_subject_id("acme", "lead", "crm-2", 0, KEY)
    assert first != keyed_subject_id("other", "lead", "crm-1", 0, KEY)


def test_no_name_based_uuid_of_the_reference_gives_the_keyed_id() -> None:
    ref = "ada@example.com"
    keyed = keyed_subject_id("acme", "lead", ref, 0, KEY)
    guesses = {
        legacy_subject_id("acme", "lead", ref),
        uuid5(SUBJECT_NAMESPACE, ref),
        uuid5(NAMESPACE_URL, ref),
        uuid5(NAMESPACE_URL, f"acme/lead/{ref}"),
        uuid5(SUBJECT_NAMESPACE, f"acme/lead/{ref}#0"),
    }
    assert keyed not in guesses
    assert not is_keyed(legacy_subject_id("acme", "lead", ref))


def test_a_negative_generation_is_refused() -> None:
    with pytest.raises(ValueError, match="generation"):
        keyed_subject_id("acme", "lead", "crm-1", -1, KEY)


def test_the_reference_is_checked_as_for_any_subject() -> None:
    with pytest.raises(InvalidReferenceError):
        keyed_subject_id("acme", "lead", "a/b", 0, KEY)
    with pytest.raises(InvalidReferenceError):
        legacy_subject_id("acme", "lead", "a/b")
    with pytest.raises(InvalidReferenceError):
        Subject.register(
            "acme",
            "lead",
            "a/b",
            at=T0,
            subject_id=keyed_subject_id("acme", "lead", "x", 1, KEY),
        )


def test_a_subject_registers_under_the_id_it_is_given() -> None:
    subject_id = keyed_subject_id("acme", "lead", "crm-1", 1, KEY)
    subject = Subject.register("acme", "lead", "crm-1", at=T0, subject_id=subject_id)
    assert subject.id == subject_id
    assert subject.external_ref == "crm-1"
