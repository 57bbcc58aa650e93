"""Webhook signatures: HMAC-SHA256 over the timestamp and the exact body.

Header `Factledger-Signature: t=<unix seconds>,sha256=<hex>`, where the MAC covers
`<t>.<body>`: a receiver recomputes it with the shared secret, compares in constant time, and
refuses a timestamp too far from its clock (a replayed delivery).
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "Factledger-Signature"
DEFAULT_TOLERANCE_S = 300


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},sha256={mac}"


def verify(
    secret: bytes, header: str, body: bytes, *, now: int, tolerance_s: int = DEFAULT_TOLERANCE_S
) -> bool:
    """Whether `header` signs `body` with `secret`, at a time within `tolerance_s` of `now`."""
    fields = dict(part.partition("=")[::2] for part in header.split(","))
    stamp = fields.get("t", "")
    if not stamp.isdigit() or abs(now - int(stamp)) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, int(stamp), body), header)
