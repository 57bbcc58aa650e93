"""Webhook signatures in the Standard Webhooks format, made by the `standardwebhooks` package.

Each delivery carries three headers: `webhook-id` (the delivery id, `<endpoint>:<cursor>`,
the same on every retry so that a receiver can drop a repeat), `webhook-timestamp` (unix
seconds of this attempt) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
"<id>.<timestamp>.<body>">`). Any Standard Webhooks library verifies them, given the
endpoint's secret in that format (`receiver_secret`: `whsec_` and the secret's base64);
`verify` does it for a Python receiver, refusing a timestamp more than five minutes from its
clock (a replayed delivery).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import datetime

from standardwebhooks import Webhook, WebhookVerificationError

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret


def signed_headers(secret: bytes, delivery_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The three Standard Webhooks headers for `body`, sent at `at` (timezone-aware)."""
    return {
        ID_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(int(at.timestamp())),
        SIGNATURE_HEADER: Webhook(secret).sign(delivery_id, at, body.decode()),
    }


def receiver_secret(secret: bytes) -> str:
    """The endpoint's secret as Standard Webhooks libraries take it."""
    return SECRET_PREFIX + base64.b64encode(secret).decode()


def verify(secret: bytes | str, headers: Mapping[str, str], body: bytes) -> bool:
    """Whether `headers` sign `body` with `secret` (raw bytes, or `whsec_...`) at a time
    within five minutes of this machine's clock."""
    try:
        Webhook(secret).verify(body, dict(headers), json_parse=False)
    except WebhookVerificationError:
        return False
    return True
