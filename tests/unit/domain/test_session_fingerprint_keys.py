"""A session's fingerprint is keyed by whoever records it: the key, or `BEFORE_KEYS` named on
purpose for a ledger from before keyed fingerprints, never an unkeyed digest by omission."""

from __future__ import annotations

import hashlib
import inspect

import pytest

from factledger.domain.errors import SessionConflictError
from factledger.domain.events import SessionRecorded
from factledger.domain.sessions import BEFORE_KEYS, KEYED_FINGERPRINT
from factledger.domain.subject import Subject
from factledger.testing.subject_builders import FINGERPRINT_KEY, T0, session


def recorded(subject: Subject) -> SessionRecorded:
    (event,) = [e for e in subject.collect_events() if isinstance(e, SessionRecorded)]
    return event


def test_recording_a_session_names_its_fingerprint_key_with_no_default() -> None:
    parameter = inspect.signature(Subject.record_session).parameters["fingerprint_key"]
    assert parameter.default is inspect.Parameter.empty
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY


def test_without_the_key_a_session_cannot_be_recorded(subject: Subject) -> None:
    with pytest.raises(TypeError, match="fingerprint_key"):
        subject.record_session(session("s2", "hi"), at=T0)  # type: ignore[call-arg]


def test_a_session_recorded_with_the_key_stores_an_hmac_no_digest_of_its_words(
    subject: Subject,
) -> None:
    subject.collect_events()
    said = session("s2", "Yes.")
    subject.record_session(said, at=T0, fingerprint_key=FINGERPRINT_KEY)
    stored = recorded(subject).fingerprint
    assert stored is not None
    assert stored.startswith(KEYED_FINGERPRINT)
    assert stored != said.fingerprint(BEFORE_KEYS)
    assert stored == said.fingerprint(FINGERPRINT_KEY)
    assert stored != said.fingerprint(b"g" * 32)


def test_before_keys_named_explicitly_stores_the_old_unkeyed_digest(subject: Subject) -> None:
    subject.collect_events()
    said = session("s2", "Yes.")
    subject.record_session(said, at=T0, fingerprint_key=BEFORE_KEYS)
    stored = recorded(subject).fingerprint
    assert stored == said.fingerprint(BEFORE_KEYS)
    assert stored is not None
    assert len(stored) == len(hashlib.sha256().hexdigest())


def test_a_session_recorded_before_keys_is_still_told_from_another_under_the_key(
    subject: Subject,
) -> None:
    said = session("s2", "Yes.")
    subject.record_session(said, at=T0, fingerprint_key=BEFORE_KEYS)
    # Its retry, by a ledger that now passes the subject's key: the same session, a no-op.
    assert subject.record_session(said, at=T0, fingerprint_key=FINGERPRINT_KEY) is False
    with pytest.raises(SessionConflictError):
        subject.record_session(session("s2", "No."), at=T0, fingerprint_key=FINGERPRINT_KEY)
