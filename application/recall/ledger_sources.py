"""Bridges from the `Ledger` to short-term memory and recall.

- `LedgerSessionRecorder`: records an ended session with the ledger's `record_session`.
- `LedgerRecallSources`: recall's read side over the subject aggregate (cached by the
  library; a field past its `valid_until` by the `Clock` is left out) and, for session
  summaries, the subject's `SessionRecorded` events. It serves until the profile
  projection's session index carries summaries; swap it then.
Blocking library calls run in worker threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from factledger.application.clocks import Clock
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.application.sessions.types import SessionRecording
from factledger.domain.events import SessionRecorded
from factledger.domain.provenance import REQUESTS_TO_FORGET, ChangeStatus, Evidence, Origin
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message
from factledger.domain.values import render


def confirmed_entries(subject: Subject, now: datetime) -> list[ProfileEntry]:
    """The subject's confirmed fields still valid at `now`, by field name."""
    return [
        ProfileEntry(
            field=name,
            value=render(f.value),
            condition=f.condition,
            inferred=f.origin is Origin.INFERRED,
            confirmed_at=f.confirmed_at,
            evidence_session=f.evidence_session,
        )
        for name, f in sorted(subject.fields.items())
        # Expired by the clock, not by an event: nothing is written at `valid_until`.
        if f.valid_until is None or now < f.valid_until
    ]


def open_entries(subject: Subject) -> list[OpenProposal]:
    """The subject's pending changes, oldest proposed first."""
    pending = [c for c in subject.changes.values() if c.status is ChangeStatus.PENDING]
    pending.sort(key=lambda c: c.proposed_at)
    return [
        OpenProposal(
            change_id=c.change_id,
            field=c.field,
            # A request to forget states no value, even one naming items (ADR 0160).
            value=None
            if c.proposal.value is None or c.proposal.operation in REQUESTS_TO_FORGET
            else render(c.proposal.value),
            condition=c.proposal.condition,
            inferred=c.proposal.origin is Origin.INFERRED,
            proposed_at=c.proposed_at,
            evidence_session=None
            if c.proposal.evidence is None
            else c.proposal.evidence.session_id,
            typed=c.proposal.value,
            operation=c.proposal.operation,
            said_at=_said_at(subject, c.proposal.evidence),
        )
        for c in pending
    ]


def _said_at(subject: Subject, evidence: Evidence | None) -> datetime | None:
    session = None if evidence is None else subject.sessions.get(evidence.session_id)
    return None if session is None else session.started_at


class LedgerSessionRecorder:
    """`SessionRecorder` over the ledger (idempotent by session id, as the ledger is)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    async def record_session(self, recording: SessionRecording) -> None:
        def record() -> None:
            tenant = self._ledger.tenant_of(recording.subject_id)
            self._ledger.record_session(recording.command(tenant))

        await asyncio.to_thread(record)


class LedgerRecallSources:
    """`RecallSources` over the ledger; an unknown subject reads as empty. `clock` decides
    which fields have expired (by default the ledger's, which dates its events)."""

    def __init__(self, ledger: Ledger, *, clock: Clock | None = None) -> None:
        self._ledger = ledger
        self._clock = clock or ledger.clock

    def _subject(self, subject_id: UUID) -> Subject | None:
        try:
            return cast("Subject", self._ledger.repository.get(subject_id))
        except AggregateNotFoundError:
            return None

    async def confirmed_profile(self, subject_id: UUID) -> Sequence[ProfileEntry]:
        def read() -> list[ProfileEntry]:
            subject = self._subject(subject_id)
            return [] if subject is None else confirmed_entries(subject, self._clock.now())

        return await asyncio.to_thread(read)

    async def open_proposals(self, subject_id: UUID, *, limit: int) -> Sequence[OpenProposal]:
        def read() -> list[OpenProposal]:
            subject = self._subject(subject_id)
            return [] if subject is None else open_entries(subject)[:limit]

        return await asyncio.to_thread(read)

    def _digests(self, subject_id: UUID) -> list[SessionDigest]:
        events = self._ledger.repository.event_store.get(subject_id)
        return [
            SessionDigest(e.session_id, Channel(e.channel), e.started_at, e.summary)
            for e in events
            if isinstance(e, SessionRecorded)
        ]

    async def recent_sessions(self, subject_id: UUID, *, limit: int) -> Sequence[SessionDigest]:
        def read() -> list[SessionDigest]:
            digests = self._digests(subject_id)
            digests.sort(key=lambda d: d.started_at, reverse=True)
            return digests[:limit]

        return await asyncio.to_thread(read)

    async def sessions(
        self, subject_id: UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]:
        def read() -> dict[str, SessionDigest]:
            subject = self._subject(subject_id)
            if subject is None:
                return {}
            return {
                i: SessionDigest(i, s.channel, s.started_at)
                for i in session_ids
                if (s := subject.sessions.get(i)) is not None
            }

        return await asyncio.to_thread(read)

    async def transcript(self, subject_id: UUID, session_id: str) -> Sequence[Message]:
        def read() -> list[Message]:
            subject = self._subject(subject_id)
            info = None if subject is None else subject.sessions.get(session_id)
            return (
                []
                if info is None
                else [Message(role, text, forgotten=not text) for role, text in info.messages]
            )

        return await asyncio.to_thread(read)
