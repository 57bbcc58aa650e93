"""Webhook signatures in the Standard Webhooks format: a receiver with any Standard Webhooks
library verifies them with the endpoint's secret; another body, secret or an old timestamp
is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

from standardwebhooks import Webhook

from factledger.application.webhooks.signing import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    receiver_secret,
    signed_headers,
    verify,
)

SECRET = b"a-shared-secret-of-at-least-32-bytes!"
BODY = b'{"id":"crm:7"}'
AT = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # 1_700_000_000


def test_the_headers_follow_the_standard_webhooks_format() -> None:
    headers = signed_headers(SECRET, "crm:7", AT, BODY)
    mac = hmac.new(SECRET, b"crm:7.1700000000." + BODY, hashlib.sha256).digest()
    assert headers == {
        ID_HEADER: "crm:7",
        TIMESTAMP_HEADER: "1700000000",
        SIGNATURE_HEADER: "v1," + base64.b64encode(mac).decode(),
    }


def test_a_receiver_accepts_a_fresh_delivery_with_either_form_of_the_secret() -> None:
    headers = signed_headers(SECRET, "crm:7", datetime.now(UTC), BODY)
    assert verify(SECRET, headers, BODY)
    assert verify(receiver_secret(SECRET), headers, BODY)
    # What a receiver using the Standard Webhooks library itself does with the `whsec_` form.
    assert Webhook(receiver_secret(SECRET)).verify(BODY, headers) == {"id": "crm:7"}


def test_another_body_secret_id_or_an_old_timestamp_is_refused() -> None:
    now = datetime.now(UTC)
    headers = signed_headers(SECRET, "crm:7", now, BODY)
    assert not verify(SECRET, headers, BODY + b" ")
    assert not verify(b"another-secret-of-at-least-32-bytes!!", headers, BODY)
    assert not verify(SECRET, {**headers, ID_HEADER: "crm:8"}, BODY)
    assert not verify(
        SECRET, signed_headers(SECRET, "crm:7", now - timedelta(minutes=6), BODY), BODY
    )
    assert not verify(SECRET, {ID_HEADER: "crm:7"}, BODY)
