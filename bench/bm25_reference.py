"""A plain BM25 over verbatim records: the datasets' lexical reference, run by our own harness.

It reproduces the READMEs' BM25 floors (lower-cased word tokens, stop-words removed, k1 = 1.2,
b = 0.75), which checks the harness's scoring end to end. It implements only the record path
of the memory port; transcripts, memories and forgetting are out of its scope.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryConflictError,
    MemoryNotFoundError,
)
from factledger.application.memory.types import (
    BackendHealth,
    Capability,
    ForgetResult,
    HitKind,
    IngestMode,
    MemoryFact,
    Metadata,
    Namespace,
    ProcessingStatus,
    SearchHit,
    SearchQuery,
    StoredRecord,
)
from factledger.domain.transcript import Message

K1 = 1.2
B = 0.75
WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()  # noqa: SIM905 (a word list reads better as prose)
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop-words."""
    return [word for word in WORD.findall(text.lower()) if word not in STOP_WORDS]


@dataclass(slots=True)
class _Index:
    records: dict[str, StoredRecord] = field(default_factory=dict)
    terms: dict[str, Counter[str]] = field(default_factory=dict)
    document_frequency: Counter[str] = field(default_factory=Counter)
    total_length: int = 0


class Bm25ReferenceBackend:
    """Okapi BM25 per namespace over each record's `body_json` taken as text."""

    name = "bm25-reference"
    capabilities: frozenset[Capability] = frozenset()  # it holds no facts at all

    def __init__(self) -> None:
        self._indexes: dict[Namespace, _Index] = {}

    async def put_record(
        self,
        namespace: Namespace,
        record_id: str,
        kind: str,
        body_json: str,
        metadata: Metadata | None = None,
        *,
        search_text: str | None = None,
    ) -> None:
        index = self._indexes.setdefault(namespace, _Index())
        if (old := index.records.get(record_id)) is not None:
            if old.body_json != body_json:
                raise MemoryConflictError(f"record {record_id} exists with another body")
            return
        index.records[record_id] = StoredRecord(record_id, kind, body_json, dict(metadata or {}))
        counts = Counter(tokens(body_json if search_text is None else search_text))
        index.terms[record_id] = counts
        index.document_frequency.update(counts.keys())
        index.total_length += sum(counts.values())

    async def get_record(self, namespace: Namespace, record_id: str) -> StoredRecord:
        index = self._indexes.get(namespace, _Index())
        if record_id not in index.records:
            raise MemoryNotFoundError(f"record {record_id}")
        return index.records[record_id]

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        index = self._indexes.get(namespace)
        if index is None or not index.records:
            return []
        scored = sorted(
            ((self._score(index, tokens(query.text), rid), rid) for rid in index.records),
            key=lambda pair: (-pair[0], pair[1]),
        )
        return [
            SearchHit(
                rid,
                index.records[rid].body_json,
                score,
                HitKind.CHUNK,
                True,
                False,
                None,
                None,
                metadata=index.records[rid].metadata,
            )
            for score, rid in scored[: query.limit]
            if score > 0 and score >= query.threshold
        ]

    def _score(self, index: _Index, query: list[str], record_id: str) -> float:
        counts = index.terms[record_id]
        count = len(index.records)
        average = index.total_length / count
        length = sum(counts.values())
        score = 0.0
        for term in query:
            frequency = counts.get(term, 0)
            if not frequency:
                continue
            df = index.document_frequency[term]
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            score += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        return score

    async def ingest_transcript(
        self,
        namespace: Namespace,
        document_id: str,
        transcript: Sequence[Message],
        *,
        occurred_at: datetime,
        metadata: Metadata | None = None,
        mode: IngestMode = IngestMode.INSTANT,
    ) -> ProcessingStatus:
        raise InvalidMemoryInputError("transcript", "bm25-reference indexes records only")

    async def processing_status(self, namespace: Namespace, document_id: str) -> ProcessingStatus:
        raise MemoryNotFoundError(f"document {document_id}")

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        return []

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        raise MemoryNotFoundError(f"memory {memory_id}")

    async def forget(
        self, namespace: Namespace, memory_ids: Sequence[str], *, reason: str
    ) -> ForgetResult:
        return ForgetResult((), tuple(memory_ids))

    async def expire(self, namespace: Namespace, memory_id: str, *, at: datetime) -> None:
        raise MemoryNotFoundError(f"memory {memory_id}")

    async def delete_records(self, namespace: Namespace, record_ids: Sequence[str]) -> ForgetResult:
        index = self._indexes.get(namespace, _Index())
        deleted: list[str] = []
        missing: list[str] = []
        for record_id in dict.fromkeys(record_ids):
            if index.records.pop(record_id, None) is None:
                missing.append(record_id)
                continue
            counts = index.terms.pop(record_id)
            index.document_frequency.subtract(counts.keys())
            index.total_length -= sum(counts.values())
            deleted.append(record_id)
        return ForgetResult(tuple(deleted), tuple(missing))

    async def drop_namespace(self, namespace: Namespace) -> None:
        self._indexes.pop(namespace, None)

    async def health(self) -> BackendHealth:
        return BackendHealth(True, self.name)

    async def close(self) -> None:
        self._indexes.clear()
