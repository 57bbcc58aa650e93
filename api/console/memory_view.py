"""What the memory backend holds for a subject: its memories, marked, and our own records.

Memories come from `MemoryBackend.list_memories` on the subject's namespace (superseded and
forgotten ones included, so the marks mean something). Records are looked up by the ids the
sync derives from the ledger (`application.sync.ids`): one per session summary, proposal and
profile version; a record the sync has not written yet shows as missing, not as an error.

A page shows only what may be read: a memory the ledger forgot (by id, or with a field) is
listed as forgotten, with when and why, never with its words, whether or not the sync has
carried the forget to the backend yet; a memory a rejection or an approval retired is marked
so, not as the latest (`memory_fates`). A record that holds a forgotten field's content (a
proposal of it, a profile version that held it) is withheld the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass
from uuid import UUID

from factledger.api.console.memory_fates import Fate, positions_named, subject_decisions
from factledger.api.console.subject_view import SessionView
from factledger.application.errors import MemoryNotFoundError
from factledger.application.ledger.core import SubjectAsRead
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.queries import ProfileVersion
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import (
    namespace_for,
    profile_record_id,
    proposal_record_id,
    summary_record_id,
    transcript_document_id,
)
from factledger.application.memory.types import MemoryFact
from factledger.domain.subject import Subject

MEMORIES_SHOWN = 100  # the port's largest page
RECORDS_SHOWN = 60


@dataclass(frozen=True, slots=True)
class MemoryRow:
    fact: MemoryFact
    session_id: str | None  # the session whose transcript the memory came from, if known
    fate: Fate | None = None  # why it is no longer served, if it is not

    @property
    def marks(self) -> tuple[str, ...]:
        fact = self.fact
        if self.fate is not None:
            marks = [self.fate.kind]
        else:
            marks = ["latest" if fact.is_latest else "superseded"]
        if fact.is_inference:
            marks.append("inferred")
        return tuple(marks)

    @property
    def text(self) -> str | None:
        """The memory's words, None when they may not be read (forgotten)."""
        return self.fact.text if self.fate is None or self.fate.shows_text else None


@dataclass(frozen=True, slots=True)
class RecordRow:
    record_id: str
    label: str
    body: str | None  # None: not in the backend (not synced yet, or deleted by a forget)
    withheld: bool = False  # holds a forgotten field's content: the body is not shown


@dataclass(frozen=True, slots=True)
class MemoryPage:
    backend: str
    memories: list[MemoryRow]
    records: list[RecordRow]


def _wanted_records(
    subject_id: UUID, sessions: list[SessionView], change_ids: list[UUID], versions: list[int]
) -> list[tuple[str, str]]:
    wanted = [
        (summary_record_id(subject_id, s.session_id), f"summary of session {s.session_id}")
        for s in sessions
        if s.summary is not None
    ]
    wanted += [(proposal_record_id(c), f"proposal {c}") for c in change_ids]
    wanted += [(profile_record_id(v), f"profile version {v}") for v in versions]
    return wanted[:RECORDS_SHOWN]


@dataclass(frozen=True, slots=True)
class LedgerSide:
    """What the ledger says of the subject, for the page to show only what may be read."""

    ledger: Ledger
    read: SubjectAsRead  # the subject and its events, from one server
    versions: list[int]
    forgotten_versions: Collection[int]  # profile versions that held a field since forgotten


def any_forgotten(version: ProfileVersion) -> bool:
    """Whether a written profile version held a field since forgotten (redacted in it)."""
    return any(f.forgotten for f in version.fields.values())


def forgotten_changes(subject: Subject) -> set[UUID]:
    """The changes a forget redacted: proposed before their field's latest forget, or
    withdrawn with a forgotten memory whose lines they quoted."""
    marks = subject.forget_marks
    taken = {
        change_id
        for change_id, record in subject.changes.items()
        if (mark := marks.get(record.field)) is not None and record.proposed_version < mark.version
    }
    return taken.union(*subject.memory_withdrew.values())


async def memory_page(
    backend: MemoryBackend, subject_id: UUID, sessions: list[SessionView], side: LedgerSide
) -> MemoryPage:
    ns = namespace_for(subject_id)
    facts = await backend.list_memories(
        ns, include_superseded=True, include_forgotten=True, limit=MEMORIES_SHOWN
    )
    decisions = await asyncio.to_thread(
        subject_decisions, side.ledger, side.read, positions_named(facts)
    )
    capabilities = frozenset(backend.capabilities)
    by_document = {transcript_document_id(subject_id, s.session_id): s.session_id for s in sessions}
    memories = [
        MemoryRow(f, by_document.get(f.document_id or ""), decisions.fate(f, capabilities))
        for f in facts
    ]
    redacted = forgotten_changes(side.read.subject)
    withheld = {proposal_record_id(c) for c in redacted}
    withheld |= {profile_record_id(v) for v in side.forgotten_versions}
    change_ids = list(side.read.subject.changes)
    records = []
    for record_id, label in _wanted_records(subject_id, sessions, change_ids, side.versions):
        try:
            stored = await backend.get_record(ns, record_id)
        except MemoryNotFoundError:
            records.append(RecordRow(record_id, label, None))
        else:
            hidden = record_id in withheld
            body = None if hidden else stored.body_json
            records.append(RecordRow(record_id, label, body, withheld=hidden))
    return MemoryPage(backend.name, memories, records)
