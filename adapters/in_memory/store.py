"""State of one namespace in the in-memory backend: facts, record chunks, vectors, documents."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from factledger.adapters.in_memory.visibility import TRACKED, VisibilityColumns
from factledger.application.memory.lexical import keywords
from factledger.application.memory.ports import Vectors
from factledger.application.memory.types import (
    MemoryFact,
    MetadataValue,
    ProcessingStatus,
    Relation,
    StoredRecord,
)
from factledger.domain.transcript import Message


class VectorTable:
    """Append-only rows of one namespace, stacked into a matrix only when a search needs it."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._rows: list[Vectors] = []
        self._matrix: Vectors = np.zeros((0, dimension), dtype=np.float32)
        self._stacked = 0

    def append(self, vectors: Vectors) -> list[int]:
        start = len(self._rows)
        self._rows.extend(np.asarray(row, dtype=np.float32) for row in vectors)
        return list(range(start, len(self._rows)))

    def matrix(self) -> Vectors:
        # Re-stacking on every append would make ingest quadratic; stack lazily on read.
        if self._stacked != len(self._rows):
            self._matrix = np.vstack(self._rows).astype(np.float32, copy=False)
            self._stacked = len(self._rows)
        return self._matrix

    def erase(self, rows: list[int]) -> None:
        """Zeroes rows (an erased record's vectors); row numbers of the others stay valid."""
        for row in rows:
            self._rows[row] = np.zeros(self.dimension, dtype=np.float32)
        self._stacked = -1  # restack on the next read


@dataclass(slots=True)
class StoredFact:
    id: str
    text: str
    slot: str | None
    document_id: str
    occurred_at: datetime
    row: int
    tokens: Counter[str]
    metadata: dict[str, MetadataValue]
    source_indexes: tuple[int, ...] = ()
    condition: str | None = None
    is_inference: bool = False
    relations: tuple[Relation, ...] = ()
    version: int = 1
    is_latest: bool = True
    forgotten: bool = False
    forget_reason: str | None = None
    expires_at: datetime | None = None
    # What a fact replacing this one in its slot inherits (`application.memory.succession`).
    handed_on: frozenset[str] = frozenset()
    # The namespace's visibility arrays this fact is a row of, and which (`add_fact`).
    columns: VisibilityColumns | None = field(default=None, repr=False, compare=False)
    position: int = field(default=-1, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        # A flag changed after the fact joined a namespace: its row of the arrays follows.
        if name in TRACKED and (columns := getattr(self, "columns", None)) is not None:
            columns.update(self.position, self)

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def hidden(self, now: datetime) -> bool:
        """Forgotten or past its expiry: out of default search and of the current facts."""
        return self.forgotten or self.expired(now)

    def to_memory(self, now: datetime) -> MemoryFact:
        return MemoryFact(
            id=self.id,
            text=self.text,
            slot=self.slot,
            is_latest=self.is_latest,
            is_inference=self.is_inference,
            is_forgotten=self.hidden(now),
            occurred_at=self.occurred_at,
            document_id=self.document_id,
            version=self.version,
            relations=self.relations,
            condition=self.condition,
            forget_reason=self.forget_reason,
            expires_at=self.expires_at,
            source_indexes=self.source_indexes,
            metadata=dict(self.metadata),
        )


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: str
    record_id: str
    text: str
    row: int
    tokens: Counter[str]
    metadata: dict[str, MetadataValue]


@dataclass(slots=True)
class DocumentState:
    document_id: str
    transcript: tuple[Message, ...]
    occurred_at: datetime
    metadata: dict[str, MetadataValue]
    status: ProcessingStatus


class NamespaceState:
    """Everything one namespace holds; dropping the namespace drops this object whole."""

    def __init__(self, dimension: int) -> None:
        self.facts: dict[str, StoredFact] = {}
        self.fact_vectors = VectorTable(dimension)
        self.chunks: dict[str, StoredChunk] = {}
        self.chunk_vectors = VectorTable(dimension)
        self.records: dict[str, StoredRecord] = {}
        self.documents: dict[str, DocumentState] = {}
        # Linking new facts to current ones must see a stable graph: one writer at a time.
        self.lock = asyncio.Lock()
        self.fact_rows: list[StoredFact] = []
        self.chunk_rows: list[StoredChunk] = []
        # keyword -> ids of the facts holding it, so keyword scoring reads only those facts
        self.fact_postings: dict[str, set[str]] = {}
        # keyword -> positions in `fact_rows` of the facts holding it (the same postings, as
        # the row numbers the memories search lifts in one array operation)
        self.fact_term_positions: dict[str, list[int]] = {}
        # the visibility flags of `fact_rows`, as arrays (`visibility`)
        self.fact_visibility = VisibilityColumns()
        # `fact_term_positions` as arrays, extended when a search finds a list grown: turning
        # a common keyword's list into an array on every search was most of a lifted search
        self._term_arrays: dict[str, np.ndarray] = {}

    def current_in_slot(self, slot: str, now: datetime) -> StoredFact | None:
        for fact in reversed(self.fact_rows):
            if fact.slot == slot and fact.is_latest and not fact.hidden(now):
                return fact
        return None

    def add_fact(self, fact: StoredFact) -> None:
        if fact.columns is not None:
            raise ValueError(f"fact {fact.id} is already in a namespace")
        self.facts[fact.id] = fact
        self.fact_rows.append(fact)
        fact.position = self.fact_visibility.add(fact)
        fact.columns = self.fact_visibility
        for term in fact.tokens:
            self.fact_postings.setdefault(term, set()).add(fact.id)
            self.fact_term_positions.setdefault(term, []).append(len(self.fact_rows) - 1)

    def term_positions(self, term: str) -> np.ndarray:
        """The positions in `fact_rows` of the facts holding `term`, as an int64 array."""
        positions = self.fact_term_positions.get(term, [])
        cached = self._term_arrays.get(term)
        known = 0 if cached is None else len(cached)
        if cached is None or known != len(positions):
            added = np.asarray(positions[known:], dtype=np.int64)
            cached = added if cached is None else np.concatenate([cached, added])
            if positions:
                self._term_arrays[term] = cached
        return cached

    def add_chunk(self, chunk: StoredChunk) -> None:
        self.chunks[chunk.id] = chunk
        self.chunk_rows.append(chunk)

    def drop_chunks_of(self, record_id: str) -> None:
        """Erases a record's chunks: text, terms and vectors."""
        gone = [c for c in self.chunk_rows if c.record_id == record_id]
        for chunk in gone:
            del self.chunks[chunk.id]
        self.chunk_rows = [c for c in self.chunk_rows if c.record_id != record_id]
        self.chunk_vectors.erase([c.row for c in gone])


def term_counts(text: str) -> Counter[str]:
    return Counter(keywords(text))
