"""What the memory backend holds for a subject: its memories, marked, and our own records.

Memories come from `MemoryBackend.list_memories` on the subject's namespace (superseded and
forgotten ones included, so the marks mean something). Records are looked up by the ids the
sync derives from the ledger (`application.sync.ids`): one per session summary, proposal and
profile version; a record the sync has not written yet shows as missing, not as an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from factledger.api.console.subject_view import SessionView
from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.types import MemoryFact
from factledger.application.ports import MemoryBackend
from factledger.application.sync.ids import (
    namespace_for,
    profile_record_id,
    proposal_record_id,
    summary_record_id,
    transcript_document_id,
)

MEMORIES_SHOWN = 100  # the port's largest page
RECORDS_SHOWN = 60


@dataclass(frozen=True, slots=True)
class MemoryRow:
    fact: MemoryFact
    session_id: str | None  # the session whose transcript the memory came from, if known

    @property
    def marks(self) -> tuple[str, ...]:
        fact = self.fact
        marks = ["latest" if fact.is_latest else "superseded"]
        if fact.is_inference:
            marks.append("inferred")
        if fact.is_forgotten:
            marks.append("forgotten")
        return tuple(marks)


@dataclass(frozen=True, slots=True)
class RecordRow:
    record_id: str
    label: str
    body: str | None  # None: not in the backend (not synced yet, or deleted by a forget)


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


async def memory_page(
    backend: MemoryBackend,
    subject_id: UUID,
    sessions: list[SessionView],
    change_ids: list[UUID],
    versions: list[int],
) -> MemoryPage:
    ns = namespace_for(subject_id)
    facts = await backend.list_memories(
        ns, include_superseded=True, include_forgotten=True, limit=MEMORIES_SHOWN
    )
    by_document = {transcript_document_id(subject_id, s.session_id): s.session_id for s in sessions}
    memories = [MemoryRow(f, by_document.get(f.document_id or "")) for f in facts]
    records = []
    for record_id, label in _wanted_records(subject_id, sessions, change_ids, versions):
        try:
            stored = await backend.get_record(ns, record_id)
        except MemoryNotFoundError:
            records.append(RecordRow(record_id, label, None))
        else:
            records.append(RecordRow(record_id, label, stored.body_json))
    return MemoryPage(backend.name, memories, records)
