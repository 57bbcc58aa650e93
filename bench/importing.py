"""The import benchmark: a generated history through `HistoryImport` on the embedded default
(SQLite ledger, keys and positions) and on PostgreSQL (the embedded server), then the same
file again under another id (every line re-checked, nothing recorded), and optionally the
sync's follow-up (the proposals step and the in-memory backend, hashing embedder).

Figures: messages/s and ledger events/s of the import, and the time each batch of lines
took (p50 / p99); sessions/s of the re-check; seconds of the follow-up. Each run prints the
machine's load average: the machine may be shared.

`order`: `grouped` keeps each subject's sessions in a row (an export grouped by customer);
`interleaved` sorts every session by its start, subjects taking turns (an export in time
order), so a batch of lines holds one or two sessions of many subjects.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.safety_filter import RuleBasedSafetyFilter
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.postgres.import_positions import PostgresImportPositions
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.adapters.sqlite.import_positions import SqliteImportPositions
from factledger.application.clocks import SystemClock
from factledger.application.importing.follow_up import count_proposals, drain_sync, ledger_head
from factledger.application.importing.importer import HistoryImport, ImportOptions, ImportPorts
from factledger.application.importing.lines import NumberedLine, split_lines
from factledger.application.importing.positions import ImportPositions
from factledger.application.importing.report import ImportReport
from factledger.application.ledger.ledger import Ledger
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.bench.machine import load_average
from factledger.domain.provenance import Actor, ActorKind
from factledger.testing.history import HistoryShape, history_bytes
from factledger.testing.ledger_stores import make_store

STORES = ("sqlite", "postgres")
ORDERS = ("grouped", "interleaved")
TENANT = "bench"


@dataclass(frozen=True, slots=True)
class ImportFigures:
    store: str
    messages: int
    sessions: int
    events: int
    import_s: float
    recheck_s: float
    follow_up_s: float | None
    proposals: int | None
    load: str
    batch_p50_s: float = 0.0
    batch_p99_s: float = 0.0
    order: str = "grouped"

    def lines(self) -> list[str]:
        out = [
            f"{self.store}: {self.messages} messages in {self.sessions} sessions, "
            f"{self.events} ledger events in {self.import_s:.1f} s",
            f"  import    {self.messages / self.import_s:,.0f} messages/s, "
            f"{self.events / self.import_s:,.0f} ledger events/s, "
            f"{self.sessions / self.import_s:,.0f} sessions/s ({self.order} file)",
            f"  per batch of {BATCH_LINES} lines p50 {self.batch_p50_s * 1e3:.0f} ms, "
            f"p99 {self.batch_p99_s * 1e3:.0f} ms",
            f"  re-check  {self.sessions / self.recheck_s:,.0f} sessions/s "
            f"(the same file under another id: nothing recorded)",
        ]
        if self.follow_up_s is not None:
            out.append(
                f"  follow-up {self.follow_up_s:.1f} s: sync to the in-memory backend and "
                f"the proposals step ({self.proposals} changes proposed)"
            )
        out.append(f"  load average {self.load}")
        return out


@asynccontextmanager
async def _stores(kind: str, workdir: Path) -> AsyncIterator[tuple[Ledger, ImportPositions]]:
    """Fresh stores of `kind`; PostgreSQL is an embedded server of the bench's own."""
    async with AsyncExitStack() as stack:
        postgres = None
        if kind == "postgres":
            server = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
            stack.callback(server.stop)
            postgres = server.location
        store = make_store(kind, workdir=workdir, postgres=postgres)
        stack.enter_context(store.resources)
        ledger = Ledger(store.env, clock=SystemClock(), keys=store.keys)
        stack.callback(ledger.close)
        positions: ImportPositions
        if postgres is None:
            sqlite = SqliteImportPositions(workdir / "imports.sqlite")
            stack.callback(sqlite.close)
            positions = sqlite
        else:
            pg = await PostgresImportPositions.connect(postgres.conninfo, schema="bench")
            stack.push_async_callback(pg.close)
            positions = pg
        yield ledger, positions


async def _lines(data: bytes) -> AsyncIterator[NumberedLine]:
    for line in split_lines(data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20)):
        yield line


BATCH_LINES = ImportOptions(TENANT, None).batch_lines


async def _import(
    use_case: HistoryImport, data: bytes, import_id: str, batches: list[float] | None = None
) -> ImportReport:
    """`batches` gets the seconds each batch of lines took, from the end of the one before
    (reading, handling and the position saved on the way)."""
    options = ImportOptions(TENANT, import_id)
    last = [time.perf_counter()]

    def progress(line: NumberedLine) -> None:
        if batches is not None and line.number % options.batch_lines == 0:
            now = time.perf_counter()
            batches.append(now - last[0])
            last[0] = now

    return await use_case.run(_lines(data), options, progress)


def interleaved(data: bytes) -> bytes:
    """The same lines, subject lines first, then every session by its start (stable)."""
    rows = [line for line in data.splitlines() if line.strip()]
    subjects = [r for r in rows if json.loads(r)["type"] == "subject"]
    sessions = [r for r in rows if json.loads(r)["type"] == "session"]
    sessions.sort(key=lambda r: str(json.loads(r)["started_at"]))
    return b"\n".join(subjects + sessions) + b"\n"


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _follow_up(ledger: Ledger, use_case: HistoryImport) -> tuple[float, int]:
    extractor = RuleExtractor()
    backend = InMemoryMemoryBackend(
        extractor=extractor, embedder=HashingEmbedder(), clock=SystemClock()
    )
    feed = LedgerEventFeed(ledger)
    proposer = SessionProposer(ledger, extractor, Actor(ActorKind.MODEL, "rule@bench"))
    store = InMemorySyncStore()
    worker = SyncWorker(SyncPorts(store, feed, feed, backend, proposer=proposer))
    started = time.perf_counter()
    await drain_sync(worker, store, timeout_s=3600)
    elapsed = time.perf_counter() - started
    await backend.close()
    return elapsed, count_proposals(ledger, after=0, sessions=use_case.recorded)


async def run_store(
    kind: str, shape: HistoryShape, *, follow_up: bool, order: str = "grouped"
) -> ImportFigures:
    """One store's figures, on fresh stores in a temporary folder."""
    data = history_bytes(shape)
    if order == "interleaved":
        data = interleaved(data)
    batches: list[float] = []
    with tempfile.TemporaryDirectory(prefix="factledger-bench-import-") as tmp:
        async with _stores(kind, Path(tmp)) as (ledger, positions):
            ports = ImportPorts(ledger, RuleBasedSafetyFilter(), positions, ledger.clock)
            use_case = HistoryImport(ports)
            started = time.perf_counter()
            report = await _import(use_case, data, "first", batches)
            import_s = time.perf_counter() - started
            events = ledger_head(ledger)
            started = time.perf_counter()
            await _import(HistoryImport(ports), data, "second")
            recheck_s = time.perf_counter() - started
            follow_up_s, proposals = (
                await _follow_up(ledger, use_case) if follow_up else (None, None)
            )
    return ImportFigures(
        kind,
        report.messages + report.withheld,
        report.sessions,
        events,
        import_s,
        recheck_s,
        follow_up_s,
        proposals,
        load_average(),
        _percentile(batches, 0.50),
        _percentile(batches, 0.99),
        order,
    )
