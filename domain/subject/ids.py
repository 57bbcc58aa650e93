"""The subject's deterministic id: a retried registration targets the same stream."""

from __future__ import annotations

import hashlib
import hmac
from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.domain.errors import InvalidReferenceError
from factledger.domain.text import is_safe_text

SUBJECT_NAMESPACE = uuid5(NAMESPACE_URL, "factledger:subject")
MAX_REFERENCE = 200  # each of tenant, kind and external reference


def subject_id_for(tenant: str, kind: str, external_ref: str) -> UUID:
    """The deterministic id of a subject: a retried registration targets the same stream."""
    check_reference(tenant, kind, external_ref)
    return uuid5(SUBJECT_NAMESPACE, f"{tenant}/{kind}/{external_ref}")


def returning_subject_id(
    tenant: str, kind: str, external_ref: str, generation: int, key: bytes
) -> UUID:
    """The id of the subject registered under a reference for the `generation`-th time after
    erasures (1 after the first): a keyed hash (HMAC-SHA256 under a deployment key), so it
    is deterministic for a retry but neither derivable from the reference nor linkable to
    the erased subject's id by anyone without the key. A version 8 (custom) UUID."""
    check_reference(tenant, kind, external_ref)
    if generation < 1:
        raise ValueError("generation: 1 or more (generation 0 is `subject_id_for`)")
    message = f"{tenant}/{kind}/{external_ref}#{generation}".encode()
    raw = bytearray(hmac.new(key, message, hashlib.sha256).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x80  # version 8
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 9562 variant
    return UUID(bytes=bytes(raw))


def check_reference(tenant: str, kind: str, external_ref: str) -> None:
    for part in (tenant, kind, external_ref):
        if not part.strip() or len(part) > MAX_REFERENCE or "/" in part or not is_safe_text(part):
            raise InvalidReferenceError(
                f"tenant, kind and external reference: 1..{MAX_REFERENCE} chars, no '/',"
                " no NUL or unpaired surrogate"
            )
