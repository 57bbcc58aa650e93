"""One reviewer decision applied to many pending changes: a page's ticked rows, every change a
filter matches, or a group of identical proposals across subjects.

Each change still gets its own decision event on its own subject (`approve_change` or
`reject_change`), with its own command id derived from the caller's one: the same request
sent again decides nothing twice. A change the ledger refuses (someone decided first, the
field changed) is reported with its error type and the others still go in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from uuid import UUID

from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import ApproveChange, RejectChange
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import DomainError
from factledger.domain.provenance import Actor

# A filter's decision runs in one request: past this many changes, narrow the filter.
MAX_FILTER_DECISION = 10_000


@dataclass(frozen=True, slots=True)
class Pick:
    subject_id: UUID
    change_id: UUID


@dataclass(frozen=True, slots=True)
class Verdict:
    """Approve (with an optional note) or reject (with a required reason), by `by`."""

    approve: bool
    by: Actor
    text: str | None


@dataclass(frozen=True, slots=True)
class PickOutcome:
    pick: Pick
    applied: bool  # False: decided already by this same request (a retry)
    error_type: str | None = None  # set when the ledger refused the decision
    detail: str | None = None


def derived_command_id(base: str, change_id: UUID) -> str:
    """The command id of one change's decision within a request whose id is `base`."""
    return hashlib.sha256(f"{base}\x1f{change_id}".encode()).hexdigest()[:32]


def decide_one(
    ledger: Ledger, tenant: str, pick: Pick, verdict: Verdict, command_id: str
) -> PickOutcome:
    try:
        if verdict.approve:
            result = ledger.approve_change(
                ApproveChange(
                    tenant,
                    pick.subject_id,
                    pick.change_id,
                    reviewer_id=verdict.by.id,
                    command_id=command_id,
                    note=verdict.text or None,
                )
            )
        else:
            result = ledger.reject_change(
                RejectChange(
                    tenant,
                    pick.subject_id,
                    pick.change_id,
                    rejected_by=verdict.by,
                    reason=verdict.text or "",
                    command_id=command_id,
                )
            )
    except (DomainError, NotFoundError) as exc:
        return PickOutcome(pick, applied=False, error_type=type(exc).__name__, detail=str(exc))
    return PickOutcome(pick, applied=result.applied)


def decide_each(
    ledger: Ledger,
    tenant: str,
    picks: Sequence[Pick],
    verdict: Verdict,
    command_id: Callable[[Pick], str],
) -> list[PickOutcome]:
    """Every pick in turn (blocking: run it in a thread)."""
    return [decide_one(ledger, tenant, p, verdict, command_id(p)) for p in picks]
