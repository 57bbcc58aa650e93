"""The ledger's read side, as recall needs it: confirmed profile, sessions, open proposals.

Recall depends on this small port rather than on the ledger's projections directly, so it can
be tested with fixed data and served from whichever read model is cheapest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from uuid import UUID

from factledger.domain.provenance import Operation
from factledger.domain.transcript import Channel, Message
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


class RecallSources(Protocol):
    """Read-only views of one subject's ledger.

    - `confirmed_profile` never returns unconfirmed proposals, nor a field whose
      `valid_until` has passed by the sources' `Clock` (an expired field stays in the
      profile and its history; it is only no longer served).
    - `recent_sessions` is newest first; `sessions` looks sessions up by id (unknown ids are
      left out) and `transcript` returns a session's messages in order (empty when unknown).
    """

    async def confirmed_profile(self, subject_id: UUID) -> Sequence[ProfileEntry]: ...

    async def recent_sessions(self, subject_id: UUID, *, limit: int) -> Sequence[SessionDigest]: ...

    async def open_proposals(self, subject_id: UUID, *, limit: int) -> Sequence[OpenProposal]: ...

    async def sessions(
        self, subject_id: UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]: ...

    async def transcript(self, subject_id: UUID, session_id: str) -> Sequence[Message]: ...
