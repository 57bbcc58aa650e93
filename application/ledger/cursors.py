"""Opaque cursors for the event stream and webhooks: a tenant's reader learns where it stands,
never the log's global position, whose gaps would show other tenants' write volume.

A cursor is the position sealed with AES-SIV (deterministic: the same event has the same
cursor on every read, so a webhook's delivery id is stable across retries) under a key of the
key store, with the tenant as associated data: it opens only for the tenant it was sent to,
and a forged or altered one is refused. The key is never forgotten; its scope is no subject's.
"""

from __future__ import annotations

import base64
import binascii
import threading

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from factledger.application.errors import ApplicationError
from factledger.application.ledger.ports import KeyStore

CURSOR_SCOPE = "~stream-cursors"  # no subject's scope starts with `~`
START = "0"  # the start of the stream, before any event


class InvalidCursorError(ApplicationError):
    """A cursor this tenant's stream never sent."""


class StreamCursors:
    """Seals and opens cursors; the key is read once, on first use."""

    def __init__(self, keys: KeyStore) -> None:
        self._keys = keys
        self._siv: AESSIV | None = None
        self._lock = threading.Lock()

    def _cipher(self) -> AESSIV:
        with self._lock:
            if self._siv is None:
                self._siv = AESSIV(self._keys.current(CURSOR_SCOPE)[1])
            return self._siv

    def cursor(self, tenant: str, position: int) -> str:
        sealed = self._cipher().encrypt(position.to_bytes(8, "big"), [tenant.encode()])
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def position(self, tenant: str, cursor: str) -> int:
        """The position a cursor stands for (`START`: 0); `InvalidCursorError` otherwise."""
        if cursor.strip() == START:
            return 0
        try:
            raw = base64.urlsafe_b64decode(cursor.strip() + "=" * (-len(cursor.strip()) % 4))
            plain = self._cipher().decrypt(raw, [tenant.encode()])
        except (binascii.Error, ValueError, InvalidTag):
            raise InvalidCursorError("not a cursor of this stream") from None
        return int.from_bytes(plain, "big")
