"""The confirmation step of a conversation: the subject confirms or declines a pending change
in one of their own messages.

- The caller marks the message when appending it (`confirms` / `declines` a change id). Only
  a subject's message may carry the mark: an agent never decides on its own authority.
- The change must be pending on this subject when the message is appended, so the message
  follows the proposal; the decision itself is recorded with the session, in the same save
  as its transcript, with the message as evidence (`Subject.record_session`).
"""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import ChangeNotPendingError
from factledger.domain.provenance import ChangeStatus


def check_decidable(ledger: Ledger, tenant: str, subject_id: UUID, change_id: UUID) -> None:
    """Raises `ChangeNotFoundError` or `ChangeNotPendingError` (blocking: run it in a thread)."""
    record = ledger.subject(tenant, subject_id).change(change_id)
    if record.status is not ChangeStatus.PENDING:
        raise ChangeNotPendingError(f"change {change_id} is {record.status.value}")
