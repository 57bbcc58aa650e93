"""LoCoMo retrieval quality through the memory port, in both ingestion styles.

- Records: one verbatim record per turn (the README's item text and metadata), searched as
  chunks or hybrid; each hit covers the turn it names.
- Transcripts: each session is one transcript ingested twice, once per speaker as the subject
  (only a subject's own words may become facts about them); each fact covers the turns its
  `source_indexes` point at.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    HitKind,
    IngestMode,
    Metadata,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
    namespace,
)
from factledger.bench.locomo import CATEGORY_NAMES, Conversation, Turn
from factledger.bench.metrics import ScoreTable, score_ranking
from factledger.bench.progress import Advance, no_progress
from factledger.domain.transcript import Message, Role

TOP_K = 10
RECORD_KIND = "locomo.turn"
INGEST_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class LocomoRun:
    """One ingestion style searched in one mode; `label` names it in the report."""

    style: str  # "records" or "transcripts"
    mode: SearchMode

    @property
    def label(self) -> str:
        return f"{self.style}/{self.mode.value}"


def conversation_namespace(run_id: str, conversation: Conversation, style: str) -> Namespace:
    return namespace(f"bench-{run_id}-locomo-{style}-{conversation.sample_id}")


def record_id(turn: Turn) -> str:
    return "turn-" + turn.dia_id.replace(":", "-")


def record_body(turn: Turn) -> str:
    """The README's item text, as one JSON string: what a verbatim chunk holds."""
    return json.dumps(turn.text)


async def ingest_records(backend: MemoryBackend, ns: Namespace, conv: Conversation) -> None:
    """Every turn as one record, sessions in order; a few writes in flight at a time."""
    gate = asyncio.Semaphore(INGEST_CONCURRENCY)

    async def put(turn: Turn) -> None:
        async with gate:
            metadata: Metadata = {
                "dia_id": turn.dia_id,
                "session": turn.session,
                "speaker": turn.speaker,
                "session_time": turn.occurred_at.isoformat(),
            }
            await backend.put_record(ns, record_id(turn), RECORD_KIND, record_body(turn), metadata)

    for session in conv.sessions:
        await asyncio.gather(*(put(turn) for turn in session))


def session_transcript(session: Sequence[Turn], subject: str) -> list[Message]:
    return [
        Message(Role.SUBJECT if t.speaker == subject else Role.AGENT, t.raw_text, t.occurred_at)
        for t in session
    ]


def document_id(session: Sequence[Turn], speaker_index: int) -> str:
    return f"session-{session[0].session}-speaker-{speaker_index}"


async def ingest_transcripts(backend: MemoryBackend, ns: Namespace, conv: Conversation) -> int:
    """Each session once per speaker, in order; returns the number of facts made."""
    facts = 0
    for session in conv.sessions:
        for index, speaker in enumerate(conv.speakers):
            status = await backend.ingest_transcript(
                ns,
                document_id(session, index),
                session_transcript(session, speaker),
                occurred_at=session[0].occurred_at,
                metadata={
                    "session": session[0].session,
                    "speaker": speaker,
                    "subject_label": speaker,
                },
                mode=IngestMode.INSTANT,
            )
            facts += status.facts
    return facts


def record_of(hit: SearchHit) -> str:
    """The record a chunk hit belongs to (engines give chunks ids of their own)."""
    if hit.kind is HitKind.CHUNK and hit.document_id:
        return hit.document_id
    return hit.id


def covered_turns(hit: SearchHit, conv: Conversation) -> frozenset[str]:
    """The dia_ids a hit stands for: its record's turn, or a fact's source turns."""
    dia_id = hit.metadata.get("dia_id")
    if isinstance(dia_id, str):
        return frozenset({dia_id})
    record = record_of(hit)
    if record.startswith("turn-"):
        return frozenset({record.removeprefix("turn-").replace("-", ":", 1)})
    if hit.document_id and hit.document_id.startswith("session-"):
        number = int(hit.document_id.split("-")[1])
        session = next((s for s in conv.sessions if s[0].session == number), ())
        return frozenset(session[i].dia_id for i in hit.source_indexes if 0 <= i < len(session))
    return frozenset()


async def score_conversation(
    backend: MemoryBackend,
    ns: Namespace,
    conv: Conversation,
    run: LocomoRun,
    table: ScoreTable,
    advance: Advance = no_progress,
) -> tuple[int, int]:
    """Asks every scored question of one conversation and adds its scores to `table`.

    Returns (hits returned, hits that name no source turn): an engine whose items carry no
    provenance cannot be scored by this recipe, and the report must say so, not show a zero.
    """
    returned = unattributed = 0
    for question in conv.questions:
        query = SearchQuery(text=question.text, mode=run.mode, threshold=0.0, limit=TOP_K)
        hits = await backend.search(ns, query)
        ranked = [covered_turns(hit, conv) for hit in hits]
        returned += len(ranked)
        unattributed += sum(not turns for turns in ranked)
        group = f"c{question.category} {CATEGORY_NAMES[question.category]}"
        table.add(group, score_ranking(ranked, question.evidence))
        advance(1)
    return returned, unattributed
