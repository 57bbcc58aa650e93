"""The subject's deterministic id: a retried registration targets the same stream."""

from __future__ import annotations

from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.domain.errors import InvalidReferenceError
from factledger.domain.text import is_safe_text

SUBJECT_NAMESPACE = uuid5(NAMESPACE_URL, "factledger:subject")
MAX_REFERENCE = 200  # each of tenant, kind and external reference


def subject_id_for(tenant: str, kind: str, external_ref: str) -> UUID:
    """The deterministic id of a subject: a retried registration targets the same stream."""
    for part in (tenant, kind, external_ref):
        if not part.strip() or len(part) > MAX_REFERENCE or "/" in part or not is_safe_text(part):
            raise InvalidReferenceError(
                f"tenant, kind and external reference: 1..{MAX_REFERENCE} chars, no '/',"
                " no NUL or unpaired surrogate"
            )
    return uuid5(SUBJECT_NAMESPACE, f"{tenant}/{kind}/{external_ref}")
