"""Turn what recall's lookups found (possibly partial) into notes and excerpts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from factledger.application.memory.types import QueryVector, RelationKind, SearchHit
from factledger.application.recall.askable import askable
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN, ForgetMask
from factledger.application.recall.notes import (
    profile_text,
    proposal_text,
    summary_text,
    unquote,
)
from factledger.application.recall.notes import with_previous as merge_previous
from factledger.application.recall.questions import question_text
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.application.recall.types import Excerpt, Note, NoteKind, NoteOrigin
from factledger.domain.transcript import Channel, Message


@dataclass(slots=True)
class MemoryFindings:
    """Filled step by step by the memory lookup; whatever is here at the deadline is used."""

    hits: list[SearchHit] = field(default_factory=list)
    previous: dict[str, str] = field(default_factory=dict)  # superseded memory id -> its text
    transcripts: dict[str, Sequence[Message]] = field(default_factory=dict)  # by session id
    mask: ForgetMask = NOTHING_FORGOTTEN  # the ledger's forgets, as of this lookup
    # The turn's rows under the threshold that may fill its empty places, past the mask
    # (`recall.under`).
    under: list[SearchHit] = field(default_factory=list)


@dataclass(slots=True)
class LedgerFindings:
    """Filled by the ledger lookups of `session_context`, and by a turn's ledger read (its
    profile, and the subject's kind, pending changes and the field the question asks about)."""

    profile: list[ProfileEntry] = field(default_factory=list)
    recent: list[SessionDigest] = field(default_factory=list)
    proposals: list[OpenProposal] = field(default_factory=list)
    sessions: dict[str, SessionDigest] = field(default_factory=dict)  # evidence sessions
    kind: str | None = None
    vector: QueryVector | None = None  # the turn's query vector, when recall embedded it
    asked: str | None = None  # the profile field the turn's question asks about
    # The fields the subject holds a pending value of, the most probable for the question
    # first (`recall.asked.other_pending`); read only when the turn has places left.
    ranked: Callable[[], Sequence[str]] | None = None
    # The asked field's statement said after its pending value, under the search's
    # threshold, which takes that value's place (`recall.later`).
    later: SearchHit | None = None


def hit_session_id(hit: SearchHit) -> str | None:
    value = hit.metadata.get("session_id")
    return value if isinstance(value, str) else None


def hit_channel(hit: SearchHit) -> Channel | None:
    value = hit.metadata.get("channel")
    return (
        Channel(value) if isinstance(value, str) and value in Channel._value2member_map_ else None
    )


def superseded_ids(hit: SearchHit) -> list[str]:
    return [r.memory_id for r in hit.relations if r.kind is RelationKind.UPDATES]


def memory_notes(findings: MemoryFindings) -> tuple[Note, ...]:
    notes = []
    for hit in findings.hits:
        text = unquote(hit.text)
        for old_id in superseded_ids(hit):
            if old_id in findings.previous:
                text = merge_previous(text, unquote(findings.previous[old_id]))
        notes.append(
            Note(
                text=text,
                origin=NoteOrigin(
                    NoteKind.MEMORY, hit.id, hit_session_id(hit), inferred=hit.is_inference
                ),
                on=None if hit.occurred_at is None else hit.occurred_at.date(),
                channel=hit_channel(hit),
                score=hit.score,
            )
        )
    return tuple(notes)


def excerpts(findings: MemoryFindings, *, max_chars: int) -> tuple[Excerpt, ...]:
    """The transcript lines the hits came from, verbatim (cut at `max_chars` with an ellipsis)."""
    found: dict[tuple[str, int], Excerpt] = {}
    for hit in findings.hits:
        session_id = hit_session_id(hit)
        transcript = findings.transcripts.get(session_id or "", ())
        for index in hit.source_indexes:
            if session_id is None or not 0 <= index < len(transcript):
                continue
            message = transcript[index]
            if message.forgotten or not message.text:
                continue  # its words were forgotten: nothing of them is quoted
            text = message.text if len(message.text) <= max_chars else message.text[:max_chars]
            found.setdefault(
                (session_id, index),
                Excerpt(
                    text=text if text == message.text else f"{text.rstrip()}\u2026",
                    role=message.role,
                    session_id=session_id,
                    message_index=index,
                    on=None if hit.occurred_at is None else hit.occurred_at.date(),
                    channel=hit_channel(hit),
                ),
            )
    return tuple(found.values())


def _session_note(kind: NoteKind, ref: str, text: str, session: SessionDigest | None) -> Note:
    return Note(
        text=text,
        origin=NoteOrigin(kind, ref, None if session is None else session.session_id),
        on=None if session is None else session.started_at.date(),
        channel=None if session is None else session.channel,
    )


def profile_notes(findings: LedgerFindings) -> tuple[Note, ...]:
    notes = []
    for entry in findings.profile:
        session = findings.sessions.get(entry.evidence_session or "")
        note = _session_note(NoteKind.PROFILE, entry.field, profile_text(entry), session)
        if session is None:  # no evidence session known (yet): date it by the confirmation
            note = Note(note.text, note.origin, on=entry.confirmed_at.date())
        notes.append(
            Note(
                note.text,
                NoteOrigin(NoteKind.PROFILE, entry.field, note.origin.session_id, entry.inferred),
                on=note.on,
                channel=note.channel,
            )
        )
    return tuple(notes)


def proposal_notes(findings: LedgerFindings) -> tuple[Note, ...]:
    """The conversation plan: the open proposals worth asking the subject about (`askable`)."""
    notes = []
    for proposal in askable(findings.proposals, findings.profile, findings.sessions):
        session = findings.sessions.get(proposal.evidence_session or "")
        text = proposal_text(proposal)
        on = session.started_at.date() if session else proposal.proposed_at.date()
        notes.append(
            Note(
                text,
                NoteOrigin(
                    NoteKind.PROPOSAL,
                    str(proposal.change_id),
                    None if session is None else session.session_id,
                    inferred=proposal.inferred,
                ),
                on=on,
                channel=None if session is None else session.channel,
                question=question_text(proposal),
            )
        )
    return tuple(notes)


def session_notes(digests: Sequence[SessionDigest]) -> tuple[Note, ...]:
    notes = []
    for digest in digests:
        text = summary_text(digest.summary) if digest.summary else ""
        if text:
            notes.append(_session_note(NoteKind.SESSION, digest.session_id, text, digest))
    return tuple(notes)


def evidence_session_ids(
    profile: Sequence[ProfileEntry], proposals: Sequence[OpenProposal]
) -> list[str]:
    ids = [e.evidence_session for e in profile] + [p.evidence_session for p in proposals]
    return list(dict.fromkeys(i for i in ids if i))
