"""A returning person's subject id: deterministic under the deployment's key, new for each
generation, and neither the reference's own id nor derivable without the key."""

from __future__ import annotations

import pytest

from factledger.domain.errors import InvalidReferenceError
from factledger.domain.subject import Subject, returning_subject_id, subject_id_for
from factledger.testing.subject_builders import T0

KEY, OTHER_KEY = b"k" * 32, b"o" * 32


def test_the_id_is_deterministic_per_key_and_generation() -> None:
    first = returning_subject_id("acme", "lead", "crm-1", 1, KEY)
    assert first == returning_subject_id("acme", "lead", "crm-1", 1, KEY)
    assert first.version == 8
    assert first != returning_subject_id("acme", "lead", "crm-1", 2, KEY)
    assert first != subject_id_for("acme", "lead", "crm-1")
    # Another deployment's key gives another id: the reference alone names nothing.
    assert first != returning_subject_id("acme", "lead", "crm-1", 1, OTHER_KEY)
    assert first != returning_subject_id("acme", "lead", "crm-2", 1, KEY)


def test_generation_zero_is_the_references_own_id() -> None:
    with pytest.raises(ValueError, match="generation"):
        returning_subject_id("acme", "lead", "crm-1", 0, KEY)


def test_the_reference_is_checked_as_for_any_subject() -> None:
    with pytest.raises(InvalidReferenceError):
        returning_subject_id("acme", "lead", "a/b", 1, KEY)
    with pytest.raises(InvalidReferenceError):
        Subject.register(
            "acme",
            "lead",
            "a/b",
            at=T0,
            subject_id=returning_subject_id("acme", "lead", "x", 1, KEY),
        )


def test_a_subject_registers_under_the_id_it_is_given() -> None:
    subject_id = returning_subject_id("acme", "lead", "crm-1", 1, KEY)
    subject = Subject.register("acme", "lead", "crm-1", at=T0, subject_id=subject_id)
    assert subject.id == subject_id
    assert subject.external_ref == "crm-1"
