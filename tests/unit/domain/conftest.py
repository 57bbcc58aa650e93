"""Subjects in a given state (the "given" of given/when/then)."""

from __future__ import annotations

import pytest

from factledger.domain.proposal import Proposal
from factledger.domain.subject import Subject, keyed_subject_id
from factledger.domain.values import OPEN_SCHEMA
from factledger.testing.subject_builders import FINGERPRINT_KEY, T0, approve, proposal, session

KEY = b"k" * 32  # a deployment key of subject ids


@pytest.fixture
def subject() -> Subject:
    """A registered lead with one recorded WhatsApp session."""
    lead = Subject.register(
        "acme",
        "lead",
        "lead-42",
        at=T0,
        subject_id=keyed_subject_id("acme", "lead", "lead-42", 0, KEY),
    )
    lead.record_session(session(), at=T0, fingerprint_key=FINGERPRINT_KEY)
    return lead


@pytest.fixture
def with_supplier(subject: Subject) -> tuple[Subject, Proposal]:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    approve(subject, change)
    return subject, change
