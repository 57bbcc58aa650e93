"""Ending a session with proposals, safely retried.

- `ProposalsRecorder` records the session and the proposals it supports in one ledger save
  (`Ledger.end_session`): a proposal that breaks a rule records nothing, so the caller gets the
  rule's error and the buffer is kept for a corrected retry.
- `recorded_end` reads back what an earlier end recorded (the session's message and withheld
  counts, the changes it proposed and those its messages decided on), so a retried end
  answers with the first result instead of "not active"; the ledger is the durable
  session id -> result map.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from factledger.application.ledger.commands import ProposeChange
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.types import SessionRecording
from factledger.domain.errors import SessionConflictError
from factledger.domain.events import SessionRecorded
from factledger.domain.sessions import transcript_from_payload
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message


class ProposalsRecorder:
    """A `SessionRecorder` for one end: the session and `proposals` in one save. `subject`
    is the subject as the save left it (None before), so the answer needs no other load."""

    def __init__(self, ledger: Ledger, tenant: str, proposals: Sequence[ProposeChange]) -> None:
        self._ledger, self._tenant, self._proposals = ledger, tenant, tuple(proposals)
        self.subject: Subject | None = None
        self.recording: SessionRecording | None = None  # what it was given to record
        self.forgot = False  # the subject's words approved a request to forget

    async def record_session(self, recording: SessionRecording) -> None:
        self.recording = recording  # before the save, which may render the response from it
        cmd = recording.command(self._tenant)
        result = await asyncio.to_thread(self._ledger.end_session, cmd, self._proposals)
        self.subject, self.forgot = result.subject, result.forgot


@dataclass(frozen=True, slots=True)
class RecordedEnd:
    """What an earlier end recorded; `subject` is a fresh copy to render proposals from."""

    subject: Subject
    message_count: int
    withheld: int
    change_ids: tuple[UUID, ...]
    decided: tuple[UUID, ...] = ()  # changes the subject's messages confirmed or declined


def decided_in(transcript: Sequence[Message]) -> tuple[UUID, ...]:
    """The changes a transcript's messages decide on, in order, each once."""
    ids = (m.decides.change_id for m in transcript if m.decides is not None and m.decides.decides)
    return tuple(dict.fromkeys(ids))


def recorded_end(
    ledger: Ledger, tenant: str, subject_id: UUID, session_id: str, change_ids: Sequence[UUID]
) -> RecordedEnd | None:
    """The recorded end of `session_id`, or None if it was never recorded (blocking: run it
    in a thread). A retry naming changes the first end did not propose is a conflict."""
    subject = ledger.subject(tenant, subject_id)
    info = subject.sessions.get(session_id)
    if info is None:
        return None
    missing = [c for c in change_ids if c not in subject.changes]
    if missing:
        raise SessionConflictError(f"session {session_id}: already ended with other proposals")
    recorded = next(
        e
        for e in ledger.repository.event_store.get(subject_id)
        if isinstance(e, SessionRecorded) and e.session_id == session_id
    )
    transcript = transcript_from_payload(recorded.transcript or [])
    return RecordedEnd(
        subject,
        len(info.messages),
        recorded.withheld_count,
        tuple(change_ids),
        decided_in(transcript),
    )
