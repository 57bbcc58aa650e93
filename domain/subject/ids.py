"""The subject's deterministic id: a retried registration targets the same stream.

A new subject's id is a keyed hash of its reference under the deployment's key, so an id
seen after an erasure confirms no guessed reference. Subjects registered before keyed ids
keep the id they were given, a name-based uuid5 of the reference (`legacy_subject_id`).
"""

from __future__ import annotations

import hashlib
import hmac
from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.domain.errors import InvalidReferenceError
from factledger.domain.text import is_safe_text

SUBJECT_NAMESPACE = uuid5(NAMESPACE_URL, "factledger:subject")
MAX_REFERENCE = 200  # each of tenant, kind and external reference


def legacy_subject_id(tenant: str, kind: str, external_ref: str) -> UUID:
    """The id subjects were registered under before keyed ids: anyone can compute it from a
    guessed reference. Only found, never given to a new subject."""
    check_reference(tenant, kind, external_ref)
    return uuid5(SUBJECT_NAMESPACE, f"{tenant}/{kind}/{external_ref}")


def keyed_subject_id(
    tenant: str, kind: str, external_ref: str, generation: int, key: bytes
) -> UUID:
    """The id of the subject registered under a reference for the `generation`-th time (0
    the first; 1 after the first erasure, and so on): HMAC-SHA256 under the deployment's
    key, cut to a version 8 (custom) UUID. Deterministic for a retry, but neither derivable
    from the reference nor linkable to another generation's id without the key."""
    check_reference(tenant, kind, external_ref)
    if generation < 0:
        raise ValueError("generation: 0 or more")
    message = f"{tenant}/{kind}/{external_ref}#{generation}".encode()
    raw = bytearray(hmac.new(key, message, hashlib.sha256).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x80  # version 8
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 9562 variant
    return UUID(bytes=bytes(raw))


def is_keyed(subject_id: UUID) -> bool:
    """Whether the id is a keyed one (only keyed ids are version 8)."""
    return subject_id.version == 8


def check_reference(tenant: str, kind: str, external_ref: str) -> None:
    for part in (tenant, kind, external_ref):
        if not part.strip() or len(part) > MAX_REFERENCE or "/" in part or not is_safe_text(part):
            raise InvalidReferenceError(
                f"tenant, kind and external reference: 1..{MAX_REFERENCE} chars, no '/',"
                " no NUL or unpaired surrogate"
            )
