"""Which recalls may start beside their subject check rather than after it.

A turn's subject check of a subject this process has not met is a read (its tenant) in a
worker thread; a recall started after it waits for that read as well as for its own. Where the
check can only refuse the subject as unregistered, never as another tenant's, the recall may
run while it reads: the check's verdict still decides the answer, and a recall it refuses is
dropped unseen.

That holds for an agent token bound to a reference (kind and reference, not an id) whose id
this process derives without a read (`SubjectIds.derived_now`): the id is keyed under the
deployment's key from the token's own tenant, kind and reference, so no other tenant's subject
has it. Tokens bound to an id, other roles, and paths naming an id keep the check first.
"""

from __future__ import annotations

from uuid import UUID

from factledger.api.http.auth import Principal, Role
from factledger.api.http.deps import ME
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import DomainError


def subject_ahead(principal: Principal, ledger: Ledger, raw: str) -> UUID | None:
    """The subject a recall may start on before its check, or None: the check goes first.

    None also when the subject's tenant is known (the check reads nothing then) and for
    anything the check refuses on its own (an unbound token, a malformed reference), so
    those answers stay the check's."""
    claim = principal.subject
    if principal.role is not Role.AGENT or raw != ME or claim is None:
        return None
    if claim.subject_id is not None:
        return None
    try:
        subject_id = ledger.subject_ids.derived_now(
            principal.tenant, claim.kind or "", claim.ref or ""
        )
    except (ValueError, DomainError):
        return None
    if subject_id is None or ledger.known_tenant(subject_id) is not None:
        return None
    return subject_id
