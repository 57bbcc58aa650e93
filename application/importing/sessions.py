"""One imported session: its times checked, every text screened, then recorded whole.

- Times follow the rules of relayed conversations (`sessions.times`): timezone-aware, not in
  the future, each message no earlier than the one before (or the session's start). A message
  without `at` takes the previous message's time; `ended_at` defaults to the last message's.
  Nothing is dated by the import's clock, so importing the same line twice builds the same
  session and the second time records nothing.
- Messages the safety filter refuses, and those the file flags, are dropped and counted
  (`withheld`), as in a live session; a summary field it refuses fails the line
  (`UnsafeFieldError` naming `summary.<key>`), as a live session's end does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from factledger.application.importing.format import SessionLine
from factledger.application.ledger.commands import RecordSession
from factledger.application.sessions.field_screening import leaves, screen_fields
from factledger.application.sessions.ports import SafetyFilter
from factledger.application.sessions.times import check_time
from factledger.domain.transcript import Message


@dataclass(frozen=True, slots=True)
class PreparedSession:
    command: RecordSession
    kind: str
    ref: str


async def prepare_session(
    line: SessionLine, *, tenant: str, subject_id: UUID, safety: SafetyFilter, now: datetime
) -> PreparedSession:
    """The session's `RecordSession` for the subject `subject_id` (the ledger's id of the
    line's reference); raises `ConversationTimeError` or `UnsafeFieldError`
    (each naming its field) for a line that cannot be recorded."""
    started = check_time("started_at", line.started_at, now=now)
    previous = started
    kept: list[Message] = []
    withheld = 0
    for index, item in enumerate(line.messages):
        at = previous if item.at is None else item.at
        check_time(f"messages[{index}].at", at, now=now, not_before=previous)
        previous = at
        message = Message(item.role, item.text, at)
        if item.flagged or not (await safety.screen(message)).allowed:
            withheld += 1
            continue
        kept.append(message)
    ended = previous if line.ended_at is None else line.ended_at
    check_time("ended_at", ended, now=now, not_before=previous)
    if line.summary is not None:
        await screen_fields(safety, leaves("summary", line.summary))
    subject = line.subject
    command = RecordSession(
        tenant=tenant,
        subject_id=subject_id,
        session_id=line.session_id,
        channel=line.channel,
        started_at=started,
        ended_at=ended,
        transcript=tuple(kept),
        summary=line.summary,
        withheld_count=withheld,
    )
    return PreparedSession(command, subject.kind, subject.ref)
