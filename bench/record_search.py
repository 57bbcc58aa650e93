"""How our own records are found: each indexed by its body (before ADR 0042) and by its
search text (after), side by side in one backend.

- The natural-question set's sessions go through the product: the ledger, the sync and its
  proposer (the default extractor), a reviewer approving each proposal in turn (a conflict
  is skipped), the sync again. That leaves proposals and profile versions, as a deployment
  has them.
- Every record is then written twice into a backend under test, in two namespaces per
  subject: once with no search text (its body, the old index) and once with the sync's.
- Each question is asked in chunks and hybrid mode (threshold 0, 10 hits, as a tenant's
  `mode` setting would); hit@k: one of the first k records found holds the answer in its
  body. Only questions some record of the subject answers count (the proposer covers a few
  kinds of fact). Nothing was tuned on the set: both parts are reported.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import structlog

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import WORKER, Runtime
from factledger.api.settings import Settings
from factledger.application.clocks import SystemClock
from factledger.application.errors import ApplicationError, MemoryNotFoundError
from factledger.application.ledger.commands import ApproveChange, RecordSession, RegisterSubject
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.record_ids import (
    namespace_for,
    profile_record_id,
    proposal_record_id,
)
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    SearchMode,
    SearchQuery,
    StoredRecord,
    namespace,
)
from factledger.application.sync.search_text import record_search_text
from factledger.bench.backends import BenchEnvironment, open_backend
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.bench.machine import load_average
from factledger.bench.natural.score import Question, load_set, questions_of
from factledger.domain.errors import DomainError
from factledger.domain.provenance import ChangeStatus
from factledger.domain.transcript import Channel, Message, Role

TENANT = "bench"
INDEXES = ("body", "search-text")
MODES = (SearchMode.CHUNKS, SearchMode.HYBRID)
KS = (1, 3, 10)
_ROLES = {"agent": Role.AGENT, "subject": Role.SUBJECT}


@dataclass(slots=True)
class RecordHits:
    """hit@k counts of one index, mode and part of the set."""

    questions: int = 0
    hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    reciprocal_ranks: float = 0.0  # of the first record holding the answer, 0 past 10

    @property
    def mrr(self) -> float:
        return self.reciprocal_ranks / self.questions if self.questions else 0.0

    def rate(self, k: int) -> float:
        return self.hits[k] / self.questions if self.questions else 0.0


@dataclass(frozen=True, slots=True)
class SubjectRecords:
    ref: str
    records: tuple[StoredRecord, ...]


async def make_records(path: Path, work_dir: Path) -> list[SubjectRecords]:
    """Each subject of the set through the ledger, the sync, its proposer and a reviewer."""
    settings = Settings(data_dir=work_dir / "ledger")
    with structlog.testing.capture_logs():
        async with open_runtime(settings, WORKER) as runtime:
            return [await _subject_records(runtime, subject) for subject in load_set(path)]


async def _subject_records(runtime: Runtime, subject: dict[str, Any]) -> SubjectRecords:
    ledger = runtime.ledger
    sid = ledger.register_subject(RegisterSubject(TENANT, "lead", subject["id"])).subject_id
    for n, session in enumerate(subject["sessions"]):
        at = datetime.fromisoformat(session["at"])
        said = tuple(Message(_ROLES[role], text, at) for role, text in session["lines"])
        ledger.record_session(
            RecordSession(TENANT, sid, f"{subject['id']}-{n}", Channel.CHAT, at, at, said)
        )
    await _drain(runtime)
    pending = [
        (record.proposed_version, change_id)
        for change_id, record in ledger.subject(TENANT, sid).changes.items()
        if record.status is ChangeStatus.PENDING
    ]
    for _, change_id in sorted(pending):
        try:
            ledger.approve_change(ApproveChange(TENANT, sid, change_id, "bench-reviewer"))
        except (DomainError, ApplicationError):
            continue  # superseded by an approval before it: as a reviewer would find it
    await _drain(runtime)
    return SubjectRecords(subject["id"], await _records_of(runtime, sid))


async def _drain(runtime: Runtime) -> None:
    worker = runtime.sync_worker
    assert worker is not None  # noqa: S101 - the WORKER runtime has one
    while True:
        report = await worker.run_once()
        if not (report.fed or report.done or report.retried or report.dead):
            return


async def _records_of(runtime: Runtime, sid: UUID) -> tuple[StoredRecord, ...]:
    subject = runtime.ledger.subject(TENANT, sid)
    ids = [proposal_record_id(c) for c in subject.changes]
    ids += [profile_record_id(v) for v in range(1, subject.profile_version + 1)]
    backend = runtime.backend
    assert backend is not None  # noqa: S101 - the WORKER runtime has one
    found = []
    for record_id in ids:
        try:
            found.append(await backend.get_record(namespace_for(sid), record_id))
        except MemoryNotFoundError:
            continue
    return tuple(found)


def index_namespace(run_id: str, index: str, ref: str) -> Namespace:
    return namespace(f"bench-{run_id}-records-{index}-{ref}")


async def write_records(
    backend: MemoryBackend, run_id: str, subjects: Sequence[SubjectRecords]
) -> None:
    for subject in subjects:
        for record in subject.records:
            text = record_search_text(record.kind, json.loads(record.body_json))
            for index in INDEXES:
                await backend.put_record(
                    index_namespace(run_id, index, subject.ref),
                    record.record_id,
                    record.kind,
                    record.body_json,
                    record.metadata,
                    search_text=text if index == "search-text" else None,
                )


async def score_records(
    backend: MemoryBackend, run_id: str, path: Path, subjects: Sequence[SubjectRecords]
) -> dict[tuple[str, str, str], RecordHits]:
    """hit@k per (index, mode, part)."""
    await write_records(backend, run_id, subjects)
    by_ref = {s.ref: {r.record_id: r.body_json.lower() for r in s.records} for s in subjects}
    tallies: dict[tuple[str, str, str], RecordHits] = {}
    for subject in load_set(path):
        bodies = by_ref[subject["id"]]
        for question in questions_of(subject):
            answer = question.answer.lower()
            if not any(answer in body for body in bodies.values()):
                continue  # no record holds it (no proposal for that kind of fact)
            for index in INDEXES:
                ns = index_namespace(run_id, index, subject["id"])
                for mode in MODES:
                    ranked = await _ranked_records(backend, ns, question, mode)
                    tally = tallies.setdefault((index, mode.value, question.part), RecordHits())
                    tally.questions += 1
                    holding = [n for n, r in enumerate(ranked, 1) if answer in bodies[r]]
                    tally.reciprocal_ranks += 1 / holding[0] if holding else 0.0
                    for k in KS:
                        tally.hits[k] += bool(holding) and holding[0] <= k
    return tallies


async def _ranked_records(
    backend: MemoryBackend, ns: Namespace, question: Question, mode: SearchMode
) -> list[str]:
    hits = await backend.search(ns, SearchQuery(question.text, mode, threshold=0.0, limit=10))
    ranked = [h.document_id for h in hits if h.kind is HitKind.CHUNK and h.document_id]
    return list(dict.fromkeys(ranked))


async def embedding_cpu(embedder: Embedder, texts: Sequence[str]) -> float:
    """CPU seconds (every thread of the process) to embed `texts` one call each, as the
    sync's `put_record` does."""
    started = time.process_time()
    for text in texts:
        await embedder.embed([text])
    return time.process_time() - started


async def run_record_search(path: Path, backends: Sequence[str]) -> list[str]:
    """The report's lines: the records made, what embedding them costs either way, and
    hit@k per backend, index, mode and part."""
    lines = [f"load average at start: {load_average()}"]
    with tempfile.TemporaryDirectory(prefix="factledger-records-") as work:
        subjects = await make_records(path, Path(work))
        records = [r for s in subjects for r in s.records]
        texts = [
            record_search_text(r.kind, json.loads(r.body_json)) or r.body_json for r in records
        ]
        bodies = [r.body_json for r in records]
        kinds = sorted({r.kind for r in records})
        counts = ", ".join(f"{sum(r.kind == k for r in records)} {k}" for k in kinds)
        lines.append(
            f"records: {len(records)} ({counts}); mean characters: body "
            f"{sum(map(len, bodies)) / len(bodies):.0f}, search text "
            f"{sum(map(len, texts)) / len(texts):.0f}"
        )
        # Interleaved twice, so a change in the machine's load weighs on both alike.
        cpu = dict.fromkeys(INDEXES, 0.0)
        for _ in range(2):
            for index, batch in (("body", bodies), ("search-text", texts)):
                cpu[index] += await embedding_cpu(OnnxEmbedder(cached_vectors=0), batch) / 2
        lines.append(
            f"embedding CPU per record: body {cpu['body'] / len(records) * 1e3:.1f} ms, "
            f"search text {cpu['search-text'] / len(records) * 1e3:.1f} ms "
            f"(load avg {load_average()})"
        )
        for name in backends:
            lines += await _backend_lines(name, path, subjects, Path(work))
    return lines


async def _backend_lines(
    name: str, path: Path, subjects: Sequence[SubjectRecords], work: Path
) -> list[str]:
    run_id = f"{int(time.time())}{name.replace('-', '')}"
    env = BenchEnvironment(
        embedder=CachingEmbedder(OnnxEmbedder()),
        extractor=RuleExtractor(),
        clock=SystemClock(),
        work_dir=_made(work / name),
        run_id=run_id,
        sim_latency=None,
    )
    try:
        async with open_backend(name, env) as opened:
            tallies = await score_records(opened.backend, run_id, path, subjects)
    finally:
        await env.close()
    lines = []
    for (index, mode, part), tally in sorted(tallies.items()):
        rates = ", ".join([*(f"hit@{k} {tally.rate(k):.3f}" for k in KS), f"MRR {tally.mrr:.3f}"])
        lines.append(f"{name} {mode} indexed by {index}, {part} (n={tally.questions}): {rates}")
    return lines


def _made(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory
