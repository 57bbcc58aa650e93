"""What the subject and proposal pages show, read from the projections and the ledger.

- Profile, versions, diffs, field history and the session index come from the profile
  projection (`ProfileReader`), as the API serves them.
- A proposal, its status and the evidence in context come from the subject aggregate
  (`Ledger.subject`), as the API's proposal route reads them.
- Transcripts and summaries come from the subject's `SessionRecorded` events, as recall's
  session sources read them; a withheld message was never stored, so it is only a count.
Every function blocks (the caller runs it in a thread).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from factledger.api.console.queue_view import QueueItem, subject_pending
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ProfileReader
from factledger.application.ledger.queries import (
    FieldDiff,
    FieldHistoryEntry,
    ProfileField,
    ProfileVersion,
    SubjectSummary,
)
from factledger.application.recall.notes import summary_text
from factledger.application.review_queue.ports import ReviewQueue
from factledger.domain.events import SessionRecorded
from factledger.domain.proposal import ChangeRecord, kept_items
from factledger.domain.provenance import Actor, Evidence, Operation
from factledger.domain.said_lines import parse_line_refs
from factledger.domain.subject import Subject
from factledger.domain.values import ListValue, render

CONTEXT_AROUND = 3  # messages shown on each side of the quoted one


@dataclass(frozen=True, slots=True)
class ContextLine:
    """One message around the evidence; on the quoted one, the quote split out of it."""

    index: int
    role: str
    before: str
    quote: str = ""
    after: str = ""

    @property
    def is_evidence(self) -> bool:
        return bool(self.quote)


def _split(text: str, quote: str) -> tuple[str, str, str]:
    at = text.find(quote)
    if at < 0:  # the quote no longer matches verbatim: mark the whole message
        return "", text, ""
    return text[:at], quote, text[at + len(quote) :]


def evidence_context(
    subject: Subject, evidence: Evidence | None, *, around: int = CONTEXT_AROUND
) -> tuple[ContextLine, ...]:
    """The messages around the quoted one, the quote highlighted; () without a session."""
    info = None if evidence is None else subject.sessions.get(evidence.session_id)
    if evidence is None or info is None:
        return ()
    first = max(0, evidence.message_index - around)
    lines = []
    for index, (role, text) in enumerate(info.messages):
        if index < first or index > evidence.message_index + around:
            continue
        if index == evidence.message_index:
            before, quote, after = _split(text, evidence.quote)
            lines.append(ContextLine(index, role.value, before, quote, after))
        else:
            lines.append(ContextLine(index, role.value, text))
    return tuple(lines)


QUEUE_AROUND = 2  # messages on each side of the quote when opened in the queue


@dataclass(frozen=True, slots=True)
class QueuedContext:
    """A queued change's evidence in context, as the queue loads it when it is opened."""

    evidence: Evidence | None
    lines: tuple[ContextLine, ...]


def queued_context(ledger: Ledger, tenant: str, subject_id: UUID, change_id: UUID) -> QueuedContext:
    """One change's quote among the messages around it, read from its subject's stream (the
    ledger's cache of subjects brings it forward), when the reviewer opens it: the queue page
    itself quotes nothing around its rows. Words forgotten since are not in the stream's
    plaintext, so they are never shown."""
    subject = ledger.read_subject(tenant, subject_id)
    evidence = subject.change(change_id).proposal.evidence  # ChangeNotFoundError: 404
    return QueuedContext(evidence, evidence_context(subject, evidence, around=QUEUE_AROUND))


@dataclass(frozen=True, slots=True)
class ProposalPage:
    subject: SubjectSummary
    record: ChangeRecord
    current: ProfileField | None
    context: tuple[ContextLine, ...]
    superseded_by: UUID | None
    # The product's models whose own review found the same field and value (they kept this
    # change instead of proposing it again).
    agreed_by: tuple[Actor, ...] = ()
    lines: tuple[SaidLine, ...] = ()  # what a request to forget what was said names

    @property
    def kept(self) -> str | None:
        """For a request to forget some items of a list: the items approving it would keep
        (ADR 0160), shown; None when it keeps none."""
        items = self.record.proposal.value
        if self.record.operation is not Operation.FORGET or not isinstance(items, ListValue):
            return None
        kept = kept_items(None if self.current is None else self.current.value, items)
        return render(ListValue(kept)) if kept else None


@dataclass(frozen=True, slots=True)
class SaidLine:
    """A line a request to forget what was said names; text None once its words are gone."""

    session_id: str
    message_index: int
    text: str | None


def said_lines(subject: Subject, record: ChangeRecord) -> tuple[SaidLine, ...]:
    value = record.proposal.value
    if record.operation is not Operation.FORGET_SAID or not isinstance(value, ListValue):
        return ()
    lines = []
    for session_id, index in parse_line_refs(value.items):
        session = subject.sessions.get(session_id)
        said = session.messages[index][1] if session and index < len(session.messages) else None
        lines.append(SaidLine(session_id, index, said or None))
    return tuple(lines)


def proposal_page(
    ledger: Ledger, profiles: ProfileReader, tenant: str, subject_id: UUID, change_id: UUID
) -> ProposalPage:
    subject = ledger.read_subject(tenant, subject_id)
    record = subject.change(change_id)  # ChangeNotFoundError: 404
    current = profiles.current(tenant, subject_id).fields.get(record.field)
    return ProposalPage(
        subject=profiles.subject(tenant, subject_id),
        record=record,
        current=None if current is None or current.forgotten else current,
        context=evidence_context(subject, record.proposal.evidence),
        superseded_by=subject.superseded_by.get(change_id),
        agreed_by=tuple(subject.agreed_by.get(change_id, ())),
        lines=said_lines(subject, record),
    )


@dataclass(frozen=True, slots=True)
class SessionView:
    """A recorded session: its summary and transcript (None once the subject is erased)."""

    session_id: str
    channel: str
    started_at: datetime
    ended_at: datetime | None
    summary: str | None
    # (index, role, text); text None for a line whose words were forgotten
    messages: tuple[tuple[int, str, str | None], ...] | None
    withheld: int
    # Who relayed each of the subject's lines (`kind:id`), by message index.
    relays: Mapping[int, str] = field(default_factory=dict)


def _session_view(event: SessionRecorded) -> SessionView:
    transcript = event.transcript
    messages = (
        None
        if transcript is None
        else tuple(
            (n, str(m.get("role")), None if m.get("text") is None else str(m.get("text")))
            for n, m in enumerate(transcript)
            if isinstance(m, Mapping)
        )
    )
    summary = event.summary
    return SessionView(
        session_id=event.session_id,
        channel=event.channel,
        started_at=event.started_at,
        ended_at=event.ended_at,
        summary=summary_text(summary) if isinstance(summary, Mapping) and summary else None,
        messages=messages,
        withheld=event.withheld_count,
        relays={
            n: f"{relay.get('kind')}:{relay.get('id')}"
            for n, m in enumerate(transcript or [])
            if isinstance(m, Mapping) and isinstance(relay := m.get("relayed_by"), Mapping)
        },
    )


def recorded_sessions(ledger: Ledger, subject_id: UUID) -> list[SessionView]:
    """The subject's recorded sessions, oldest first (the caller checked the tenant), read
    from the ledger's history (a standby's when the request may read one)."""
    return sessions_in(ledger.history.get(subject_id))


def sessions_in(events: Iterable[object]) -> list[SessionView]:
    """The recorded sessions among a subject's events, oldest first."""
    return [_session_view(e) for e in events if isinstance(e, SessionRecorded)]


@dataclass(frozen=True, slots=True)
class SubjectPage:
    subject: SubjectSummary
    profile: ProfileVersion
    versions: list[ProfileVersion]
    history: list[FieldHistoryEntry]
    pending: list[QueueItem]
    diff: list[FieldDiff] | None  # None: no two versions chosen


def subject_page(
    profiles: ProfileReader,
    tenant: str,
    subject_id: UUID,
    compare: tuple[int, int] | None,
    *,
    queue: ReviewQueue,
) -> SubjectPage:
    summary = profiles.subject(tenant, subject_id)
    pending = subject_pending(queue, profiles, tenant, subject_id)
    return SubjectPage(
        subject=summary,
        profile=profiles.current(tenant, subject_id),
        versions=profiles.versions(tenant, subject_id),
        history=profiles.history(tenant, subject_id),
        pending=pending,
        diff=None if compare is None else profiles.diff(tenant, subject_id, *compare),
    )
