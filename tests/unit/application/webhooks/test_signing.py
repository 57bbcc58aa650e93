"""Webhook signatures: HMAC-SHA256 over the timestamp and the exact body."""

from __future__ import annotations

import hashlib
import hmac

from factledger.application.webhooks.signing import signature, verify

SECRET = b"a-shared-secret-of-at-least-32-bytes!"
BODY = b'{"id":"crm:7"}'


def test_the_signature_is_hmac_sha256_of_the_timestamp_and_body() -> None:
    expected = hmac.new(SECRET, b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert signature(SECRET, 1_700_000_000, BODY) == f"t=1700000000,sha256={expected}"


def test_a_receiver_accepts_its_own_signature_within_the_tolerance() -> None:
    header = signature(SECRET, 1_700_000_000, BODY)
    assert verify(SECRET, header, BODY, now=1_700_000_100)


def test_another_body_secret_or_an_old_timestamp_is_refused() -> None:
    header = signature(SECRET, 1_700_000_000, BODY)
    assert not verify(SECRET, header, BODY + b" ", now=1_700_000_000)
    assert not verify(b"another-secret-of-at-least-32-bytes!!", header, BODY, now=1_700_000_000)
    assert not verify(SECRET, header, BODY, now=1_700_000_000 + 301)
    assert not verify(SECRET, "sha256=deadbeef", BODY, now=1_700_000_000)
