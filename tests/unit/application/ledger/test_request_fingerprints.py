"""The idempotency store's request fingerprints: an HMAC under the deployment's fingerprint key
(read once per process, one key for every process on the key store), bound to the entry's
scope, so a short body gives no digest to guess against and equal bodies are not linkable."""

from __future__ import annotations

import hashlib
from uuid import UUID

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.request_fingerprints import (
    FINGERPRINT_SCOPE,
    RequestFingerprints,
    keyed_fingerprint,
    request_digest,
)

SUBJECT = UUID("00000000-0000-0000-0000-00000000000a")
SCOPE = IdempotencyScope("t1", "agent-1", SUBJECT, "key-00000001")
BODY = b'{"role":"subject","text":"Yes."}'
URL = f"/v1/subjects/{SUBJECT}/sessions/s1/messages"
DIGEST = request_digest("POST", "/v1/subjects/{subject}/sessions/{session_id}/messages", URL, BODY)


class CountingKeyStore(InMemoryKeyStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def current(self, scope: str) -> tuple[str, bytes]:
        self.reads += 1
        return super().current(scope)


def test_the_fingerprint_is_no_digest_a_guess_of_the_body_can_match() -> None:
    key = b"k" * 32
    fingerprint = keyed_fingerprint(key, SCOPE, DIGEST)
    assert fingerprint not in {DIGEST.hex(), hashlib.sha256(BODY).hexdigest()}
    assert fingerprint != keyed_fingerprint(b"j" * 32, SCOPE, DIGEST)
    assert fingerprint == keyed_fingerprint(key, SCOPE, DIGEST)  # a retry still matches


def test_equal_bodies_under_two_scopes_give_unlinkable_fingerprints() -> None:
    key = b"k" * 32
    others = [
        IdempotencyScope("t2", "agent-1", SUBJECT, "key-00000001"),
        IdempotencyScope("t1", "agent-2", SUBJECT, "key-00000001"),
        IdempotencyScope("t1", "agent-1", UUID(int=11), "key-00000001"),
        IdempotencyScope("t1", "agent-1", SUBJECT, "key-00000002"),
    ]
    fingerprints = {keyed_fingerprint(key, s, DIGEST) for s in [SCOPE, *others]}
    assert len(fingerprints) == 5


def test_another_request_differs_by_method_route_path_or_body() -> None:
    route = "/v1/subjects/{subject}/sessions/{session_id}/messages"
    digests = {
        DIGEST,
        request_digest("PUT", route, URL, BODY),
        request_digest("POST", route + "/x", URL, BODY),
        request_digest("POST", route, URL + "x", BODY),
        request_digest("POST", route, URL, BODY + b" "),
    }
    assert len(digests) == 5


def test_the_key_is_read_once_per_process_and_shared_by_every_process() -> None:
    keys = CountingKeyStore()
    first, second = RequestFingerprints(keys), RequestFingerprints(keys)
    assert first.known_key() is None
    key = first.key()
    assert first.key() == key
    assert first.known_key() == key
    assert keys.reads == 1
    assert second.key() == key  # another process on the same key store
    live = keys.live(FINGERPRINT_SCOPE)
    assert live is not None
    assert live[1] == key
