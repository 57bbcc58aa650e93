"""A `RecallSources` with no ledger behind it: the bench measures the memory backend alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.domain.transcript import Message


class LedgerlessSources:
    """Every view is empty, so recall's time is the memory lookup's time."""

    async def confirmed_profile(self, subject_id: UUID) -> Sequence[ProfileEntry]:
        return ()

    async def recent_sessions(self, subject_id: UUID, *, limit: int) -> Sequence[SessionDigest]:
        return ()

    async def open_proposals(self, subject_id: UUID, *, limit: int) -> Sequence[OpenProposal]:
        return ()

    async def sessions(
        self, subject_id: UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]:
        return {}

    async def transcript(self, subject_id: UUID, session_id: str) -> Sequence[Message]:
        return ()
