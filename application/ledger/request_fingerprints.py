"""The fingerprints the idempotency store keeps of requests, keyed under a deployment key.

A retry is told from another request under the same idempotency key by a fingerprint of
the request (method, route, path, body). An unkeyed digest of a short body ("yes", a phone
number) gives the body back to whoever reads the store and guesses it, for as long as the
entry lives, after a forget included. So the stored fingerprint is an HMAC under a key of
the key store (scope `~idempotency-fingerprints`, never forgotten, shared by every process of
the deployment), over the entry's scope and a digest of the request that is never stored:
two entries holding the same body are not linkable either.

A key store restored without this key gets a new one: the entries saved before then no
longer match their retries, which answer 422 until the entries' time to live passes (no
word is lost; the ledger's command ids keep a rerun from acting twice).
"""

from __future__ import annotations

import hashlib
import hmac
import threading

from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.ledger.ports import KeyStore

FINGERPRINT_SCOPE = "~idempotency-fingerprints"  # no subject's scope starts with `~`
_SEP = b"\x1f"


def request_digest(method: str, route: str, path: str, body: bytes) -> bytes:
    """What a request is, for comparing it with its retry: held in memory, never stored."""
    digest = hashlib.sha256()
    digest.update(f"{method} {route}\n".encode())
    digest.update(path.encode() + b"\n")
    digest.update(body)
    return digest.digest()


def keyed_fingerprint(key: bytes, scope: IdempotencyScope, digest: bytes) -> str:
    """The fingerprint stored for a request of `digest` under `scope`."""
    parts = (scope.tenant, scope.principal, str(scope.subject_id), scope.key)
    message = _SEP.join(p.encode() for p in parts) + _SEP + digest
    return hmac.new(key, message, hashlib.sha256).hexdigest()


class RequestFingerprints:
    """Holds the deployment's fingerprint key: read (or created) once per process; safe
    across threads."""

    def __init__(self, keys: KeyStore) -> None:
        self._keys = keys
        self._key: bytes | None = None
        self._lock = threading.Lock()

    def known_key(self) -> bytes | None:
        """The key when this process has read it; None otherwise. Never blocks on a read."""
        with self._lock:
            return self._key

    def key(self) -> bytes:
        """The key; blocks on the key store the first time."""
        known = self.known_key()
        if known is not None:
            return known
        # Concurrent first uses (other processes too) all end with the one key stored.
        live = self._keys.current(FINGERPRINT_SCOPE)[1]
        with self._lock:
            self._key = live
            return live
