"""Transcript ingest of the pgvector backend: extraction, embedding, linking and the writes.

- Extraction and embedding run outside any transaction (an LLM extractor may take seconds).
- Everything a transcript writes (document row, facts, supersessions, chunks) is one
  transaction holding the namespace's advisory lock, so concurrent ingests into one namespace
  keep exactly one current fact per slot, and a failure leaves nothing half-written.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from factledger.adapters.pgvector.connection import PgvectorConnections
from factledger.application.memory.extraction import (
    NO_CONTEXT,
    ExtractedFact,
    ExtractionContext,
    ExtractionRequest,
    KnownFact,
)
from factledger.application.memory.lexical import (
    extraction_terms,
    subject_label,
    vector_text,
)
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.memory.rules import derive_memory_id
from factledger.application.memory.succession import SlotKeywords, succeed
from factledger.application.memory.types import (
    Namespace,
    ProcessingState,
    ProcessingStatus,
    RelationKind,
)
from factledger.domain.transcript import Message, Role

UNSLOTTED_KNOWN_LIMIT = 500  # newest unslotted current facts shown to an extractor
_HIDDEN = "(is_forgotten OR (expires_at IS NOT NULL AND expires_at <= %s))"


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """A transcript as the `documents` table holds it; its facts inherit date and metadata."""

    document_id: str
    mode: str
    transcript_json: str
    occurred_at: datetime
    metadata_json: str


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a transcript yielded, ready to be written in one transaction."""

    facts: Sequence[ExtractedFact]
    vectors: np.ndarray[Any, Any]
    terms: Sequence[list[str]] = ()  # each fact's keywords (`application.memory.lexical`)


def transcript_to_json(transcript: Sequence[Message]) -> str:
    return json.dumps(
        [
            {"role": m.role.value, "text": m.text, "at": m.at.isoformat() if m.at else None}
            for m in transcript
        ]
    )


def transcript_from_json(raw: list[dict[str, Any]]) -> list[Message]:
    return [
        Message(
            role=Role(m["role"]),
            text=m["text"],
            at=datetime.fromisoformat(m["at"]) if m["at"] else None,
        )
        for m in raw
    ]


_KNOWN_FACTS = (
    f"SELECT id, text, slot FROM (SELECT id, text, slot, seq FROM memories "  # noqa: S608
    f"WHERE is_latest AND NOT {_HIDDEN} AND slot IS NOT NULL UNION ALL "
    f"(SELECT id, text, slot, seq FROM memories WHERE is_latest AND NOT {_HIDDEN} "
    "AND slot IS NULL ORDER BY seq DESC LIMIT %s)) AS k ORDER BY seq"
)
_STATUS = "SELECT state, facts, error_type FROM documents WHERE document_id = %s"


async def known_facts(conn: psycopg.AsyncConnection[Any], now: datetime) -> list[KnownFact]:
    """The current facts an extractor may link new ones to: every slotted one (slots are how
    updates find their target) and the newest unslotted ones, oldest first."""
    cur = await conn.execute(_KNOWN_FACTS, known_facts_args(now))
    return known_from_rows(await cur.fetchall())


def known_facts_args(now: datetime) -> list[Any]:
    return [now, now, UNSLOTTED_KNOWN_LIMIT]


def known_from_rows(rows: Sequence[tuple[Any, ...]]) -> list[KnownFact]:
    return [KnownFact(memory_id=r[0], text=r[1], slot=r[2]) for r in rows]


async def status_and_known(
    db: PgvectorConnections, namespace: Namespace, document_id: str, now: datetime
) -> tuple[ProcessingStatus | None, list[KnownFact]]:
    """The document's stored status and the facts an extractor may link to, read in one round
    trip (ADR 0103); the facts are read even when the status makes them moot (a replay)."""
    status, known = await db.in_one_trip(
        namespace, [(_STATUS, [document_id]), (_KNOWN_FACTS, known_facts_args(now))]
    )
    return status_from_rows(document_id, status), known_from_rows(known)


def _metadata(doc: DocumentRow) -> dict[str, Any]:
    metadata = json.loads(doc.metadata_json) if doc.metadata_json else {}
    return metadata if isinstance(metadata, dict) else {}


def context_of(doc: DocumentRow) -> ExtractionContext:
    """The extraction context the document's metadata carries (the sync puts it there)."""
    return ExtractionContext.from_metadata(_metadata(doc))


def label_of(doc: DocumentRow) -> str | None:
    """The subject label the document's metadata gives, if any."""
    return subject_label(_metadata(doc))


async def extract(
    extractor: Extractor,
    embedder: Embedder,
    transcript: Sequence[Message],
    *,
    occurred_at: datetime,
    known: Sequence[KnownFact],
    context: ExtractionContext = NO_CONTEXT,
    label: str | None = None,
) -> Extraction:
    """Facts with their vectors (of the fact carrying its subject's label) and keywords (the
    label, the fact and its source sentences)."""
    request = ExtractionRequest(transcript, occurred_at=occurred_at, known=known, context=context)
    facts = await extractor.extract(request)
    if not facts:
        return Extraction(facts, np.zeros((0, embedder.dimension), dtype=np.float32))
    vectors = await embedder.embed([vector_text(f.text, label, f.slot) for f in facts])
    terms = [sorted(t) for t in extraction_terms(facts, transcript, label)]
    return Extraction(facts, vectors, terms)


async def claim_document(
    conn: psycopg.AsyncConnection[Any],
    doc: DocumentRow,
    state: ProcessingState,
    *,
    error_type: str | None = None,
) -> ProcessingStatus | None:
    """Creates the document row (or revives a failed one) and returns None. Returns the stored
    status instead when the document exists: re-ingesting under the same id is a no-op."""
    cur = await conn.execute(
        "INSERT INTO documents AS d (namespace, document_id, state, mode, transcript, "
        "occurred_at, metadata, error_type) "
        "VALUES (current_setting('app.namespace'), %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (namespace, document_id) DO UPDATE SET state = excluded.state, "
        "mode = excluded.mode, transcript = excluded.transcript, "
        "occurred_at = excluded.occurred_at, metadata = excluded.metadata, "
        "error_type = excluded.error_type, facts = 0, queued_at = clock_timestamp(), "
        "claimed_at = NULL WHERE d.state = 'failed' RETURNING document_id",
        [
            doc.document_id,
            state.value,
            doc.mode,
            doc.transcript_json,
            doc.occurred_at,
            doc.metadata_json,
            error_type,
        ],
    )
    if await cur.fetchone() is not None:
        return None
    return await read_status(conn, doc.document_id)


async def read_status(
    conn: psycopg.AsyncConnection[Any], document_id: str
) -> ProcessingStatus | None:
    cur = await conn.execute(_STATUS, [document_id])
    return status_from_rows(document_id, await cur.fetchall())


def status_from_rows(document_id: str, rows: Sequence[tuple[Any, ...]]) -> ProcessingStatus | None:
    if not rows:
        return None
    state, facts, error_type = rows[0]
    return ProcessingStatus(document_id, ProcessingState(state), facts, error_type)


_MEMORY_COLUMNS = (
    "namespace, id, text, slot, is_inference, occurred_at, valid_from, document_id, version, "
    "relations, condition, source_indexes, metadata, lexical_terms, slot_terms, embedding, "
    "is_latest"
)
_MEMORY_ROW = (
    "(current_setting('app.namespace'), %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s, %b, %s)"
)
# Facts written by one multi-row INSERT at most (a transcript's facts are a few to a few dozen).
MEMORY_ROWS_PER_INSERT = 32


def _memory_insert(rows: int) -> str:
    """The INSERT of `rows` facts (every value a parameter)."""
    values = ", ".join([_MEMORY_ROW] * rows)
    return f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES {values}"  # noqa: S608 - placeholders


@dataclass(slots=True)
class _PendingFacts:
    """Fact rows linked but not yet sent, in the order they were linked: they go in one
    multi-row INSERT (one round trip instead of one per fact), sent before any statement that
    could read them (a later fact's link on the same slot or to one of their ids) and at the
    end, so every statement sees what the loop has written so far, as one INSERT per fact did."""

    rows: list[list[Any]]
    slots: set[str]
    ids: set[str]

    def add(self, memory_id: str, slot: str | None, row: list[Any]) -> None:
        self.rows.append(row)
        self.ids.add(memory_id)
        if slot is not None:
            self.slots.add(slot)

    def read_by(self, fact: ExtractedFact, targets: list[str]) -> bool:
        """Whether linking `fact` to `targets` reads a row still pending."""
        return (fact.slot is not None and fact.slot in self.slots) or any(
            t in self.ids for t in targets
        )

    async def send(self, conn: psycopg.AsyncConnection[Any]) -> None:
        for first in range(0, len(self.rows), MEMORY_ROWS_PER_INSERT):
            group = self.rows[first : first + MEMORY_ROWS_PER_INSERT]
            await conn.execute(_memory_insert(len(group)), [v for row in group for v in row])
        self.rows.clear()
        self.slots.clear()
        self.ids.clear()


async def write_extraction(
    conn: psycopg.AsyncConnection[Any],
    namespace: Namespace,
    doc: DocumentRow,
    extraction: Extraction,
    *,
    now: datetime,
) -> int:
    """Links and inserts the facts in order and marks the document done; the caller holds the
    namespace lock. A fact whose deterministic id exists already is skipped (a replay adds
    nothing). A fact that supersedes its slot's current fact also takes the words that fact
    hands on (`application.memory.succession`), read from its row as it is superseded,
    so a predecessor written earlier in the same loop counts too (`_PendingFacts` sends it
    before that read)."""
    local: dict[str, str] = {}
    written = 0
    terms = extraction.terms or [[] for _ in extraction.facts]
    ids = [derive_memory_id(namespace, doc.document_id, f.key) for f in extraction.facts]
    # One look-up for the whole document, not one per fact (round trips bound sync); the
    # namespace lock keeps other writers out, so only this loop adds to the set.
    written_ids = await _existing_ids(conn, ids)
    pending = _PendingFacts([], set(), set())
    for fact, memory_id, vector, keywords in zip(
        extraction.facts, ids, extraction.vectors, terms, strict=True
    ):
        local[fact.key] = memory_id
        if memory_id in written_ids:
            continue  # a replay, or a key repeated within the extraction: written once
        targets = list(dict.fromkeys(local.get(ref, ref) for ref in fact.related_to))
        if pending.read_by(fact, targets):
            await pending.send(conn)
        relations, version, replaced, current = await _link(
            conn, fact, targets, doc.occurred_at, now
        )
        keys = succeed(Counter(keywords), fact.text, fact.value, replaced)
        row = [
            memory_id,
            fact.text,
            fact.slot,
            fact.is_inference or fact.relation is RelationKind.DERIVES,
            doc.occurred_at,
            fact.valid_from,
            doc.document_id,
            version,
            json.dumps(relations),
            fact.condition,
            list(fact.source_indexes),
            doc.metadata_json,
            sorted(keys.terms),
            sorted(keys.handed_on),
            vector,
            current,
        ]
        pending.add(memory_id, fact.slot, row)
        written_ids.add(memory_id)
        written += 1
    await pending.send(conn)
    await conn.execute(
        "UPDATE documents SET state = 'done', facts = %s, error_type = NULL WHERE document_id = %s",
        [written, doc.document_id],
    )
    return written


async def _link(
    conn: psycopg.AsyncConnection[Any],
    fact: ExtractedFact,
    targets: list[str],
    said_at: datetime,
    now: datetime,
) -> tuple[list[dict[str, str]], int, SlotKeywords | None, bool]:
    """Same rules as the in-memory backend: a slotted fact supersedes the slot's current fact
    (read under the namespace lock), even without UPDATES, unless that fact was said after it
    (then the new fact is stored already superseded); without a slot, UPDATES supersedes
    its targets; EXTENDS and DERIVES point at the targets that exist. Also returns what the
    slot's superseded fact keeps for its successor, and whether the new fact is current."""
    if fact.relation in (RelationKind.EXTENDS, RelationKind.DERIVES):
        existing = await _existing_ids(conn, targets)
        kind = fact.relation.value
        return [{"kind": kind, "memory_id": t} for t in targets if t in existing], 1, None, True
    replaced: SlotKeywords | None = None
    if fact.slot is not None:
        # The slot's current fact found and, when said no later than this one, superseded,
        # in one statement (one round trip); a later-said one is named back instead.
        cur = await conn.execute(
            "WITH current AS (SELECT id, occurred_at FROM memories "  # noqa: S608
            f"WHERE slot = %s AND is_latest AND NOT {_HIDDEN} ORDER BY seq DESC LIMIT 1), "
            "superseded AS (UPDATE memories SET is_latest = false FROM current "
            "WHERE memories.id = current.id AND current.occurred_at <= %s "
            "RETURNING memories.id, memories.version, memories.lexical_terms, "
            "memories.slot_terms) "
            "SELECT id, version, lexical_terms, slot_terms, false FROM superseded UNION ALL "
            "SELECT id, 0, NULL, NULL, true FROM current WHERE occurred_at > %s",
            [fact.slot, now, said_at, said_at],
        )
        found = await cur.fetchall()
        if any(r[4] for r in found):
            return [], 1, None, False
        rows = {r[0]: r[1] for r in found}
        superseded = list(rows)
        replaced = next((SlotKeywords(terms=r[2], handed_on=r[3]) for r in found), None)
    elif fact.relation is RelationKind.UPDATES and targets:
        superseded = targets
        cur = await conn.execute(
            "UPDATE memories SET is_latest = false WHERE id = ANY(%s) RETURNING id, version",
            [superseded],
        )
        rows = {r[0]: r[1] for r in await cur.fetchall()}
    else:
        return [], 1, None, True
    if not rows:
        return [], 1, None, True
    relations = [{"kind": "updates", "memory_id": i} for i in superseded if i in rows]
    return relations, max([1, *(v + 1 for v in rows.values())]), replaced, True


async def _existing_ids(conn: psycopg.AsyncConnection[Any], ids: list[str]) -> set[str]:
    if not ids:
        return set()
    cur = await conn.execute("SELECT id FROM memories WHERE id = ANY(%s)", [ids])
    return {r[0] for r in await cur.fetchall()}
