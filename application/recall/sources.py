"""What recall reads from the ledger: confirmed profile entries, session digests, open
proposals (the port that serves them is `RecallSources` in `ports`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from factledger.domain.provenance import Operation
from factledger.domain.transcript import Channel
from factledger.domain.values import FieldValue


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    """One confirmed field of the current profile, rendered as text."""

    field: str
    value: str
    condition: str | None
    inferred: bool
    confirmed_at: datetime
    evidence_session: str | None


@dataclass(frozen=True, slots=True)
class SessionDigest:
    """A recorded session: when, where, and its structured summary (if any)."""

    session_id: str
    channel: Channel
    started_at: datetime
    summary: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class OpenProposal:
    """A pending change the agent may ask the subject to confirm."""

    change_id: UUID
    field: str
    value: str | None
    condition: str | None
    inferred: bool
    proposed_at: datetime
    evidence_session: str | None
    # The typed value and the operation, so a question can be phrased per type and operation.
    typed: FieldValue | None = None
    operation: Operation = Operation.SET
    # When its evidence was said (the evidence session's start; None: not known).
    said_at: datetime | None = None
