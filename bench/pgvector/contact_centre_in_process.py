"""`factledger-lab pgvector contact-centre` in process: every way in this process, in one run.

The ways of `contact_centre` (the floor, the database's search, mirrors earned at the n-th
search, `Recall.recall` over the bare default search beside that search), and two that run
what a served process runs.

A served process composes recall over more than a bare backend: the ledger's turn read (the
confirmed profile and the forget mask, from the subject aggregate on the PostgreSQL event
store), the asked-topic reader (ADR 0098, which embeds the query and hands its vector on),
the calibrated scale and the request checks of `ValidatingMemoryBackend`. These ways open the
product's own runtime (`open_runtime`, the settings a `--served` run gives its server) in
this process, so what `Recall.recall` adds around its search shows without HTTP:

- `Recall.recall` as served: the runtime's recall, its subjects registered in its ledger and
  read cold (each runtime is opened after the registration, so its aggregate cache is empty);
- its backend's search as served: the same composed backend's search, called alone on a
  runtime of its own (so it meets every namespace cold too), with the query recall asks.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import embedded_config, ensure_database
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.bootstrap.services import recall_policies
from factledger.api.settings import Settings, load_settings
from factledger.api.settings.recall import TenantRecallSettings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Namespace, SearchHit, SearchQuery
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources
from factledger.application.recall.policy import RecallPolicies, RecallPolicy, policy_of
from factledger.application.recall.ports import TurnLedger, TurnSource
from factledger.application.recall.service import Recall, RecallPorts, wide_query
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.bench.pgvector.contact_centre import (
    Call,
    ContactCentreOptions,
    Planned,
    Way,
    alternate,
    floor_way,
    load_facts,
    load_line,
    open_backend,
    opening,
    recalling_way,
    searching_way,
    table,
    warm_up,
)
from factledger.bench.pgvector.measure import percentiles
from factledger.bench.pgvector.strategies import DATABASE_ONLY
from factledger.bench.pgvector.turns import server_cpu_seconds

DATABASE = "factledger_contact_centre"

TENANT, KIND = "bench", "customer"  # as the served bench's agent tokens name them
# Recall and what it reads; the session buffer, the idempotency store and the imports are
# the routes' (`needs` of a served process beyond these do not touch recall's path).
RECALL_ONLY = Needs(sessions=False, idempotency=False, run_sync=False, imports=False)
REGISTER_ONLY = Needs(
    backend=False, sessions=False, idempotency=False, run_sync=False, imports=False
)


def served_settings(
    location: PostgresLocation, dbname: str, data_dir: Path, model: str
) -> Settings:
    """The settings a `--served` run gives its server: the PostgreSQL topology with pgvector in
    `dbname`, the packaged `model`, no vector cache (every recall embeds live, as the floor)."""
    auth = f"{location.user}:{location.password}"
    return load_settings(
        data_dir=data_dir,
        database_url=f"postgresql://{auth}@/{dbname}?host={location.host}",
        event_store={"kind": "postgres"},
        views={"kind": "postgres"},
        short_term={"kind": "postgres"},
        sync={"store": {"kind": "postgres"}},
        backend={"kind": "pgvector"},
        embedder={"kind": "onnx", "model": model, "cached_vectors": 0},
    )


async def register(settings: Settings, subjects: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """Each subject registered in the ledger under its reference, as the served bench does
    through the API; the ledger's id for it."""
    async with open_runtime(settings, REGISTER_ONLY) as runtime:
        ledger = runtime.ledger
        return {
            s: ledger.register_subject(RegisterSubject(TENANT, KIND, s.hex)).subject_id
            for s in subjects
        }


def registered(planned: Planned, ids: dict[uuid.UUID, uuid.UUID]) -> Planned:
    """The workload with every subject named by its ledger id (its namespace's subject)."""
    return Planned(
        pool=planned.pool,
        vectors=planned.vectors,
        subjects=[ids[s] for s in planned.subjects],
        picked={ids[s]: p for s, p in planned.picked.items()},
        talks=[[(ids[s], text) for s, text in talk] for talk in planned.talks],
    )


class TimedSearch(ForwardingMemoryBackend):
    """The backend recall searches, noting when each search recall awaits starts and ends."""

    def __init__(self, inner: MemoryBackend) -> None:
        super().__init__(inner)
        self.spans: list[tuple[float, float]] = []

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        started = time.perf_counter()
        try:
            return await self.inner.search(namespace, query)
        finally:
            self.spans.append((started, time.perf_counter()))


class TimedTurns:
    """The turn read recall runs beside its search, noting when each ends."""

    def __init__(self, inner: TurnSource) -> None:
        self.inner = inner
        self.ended: list[float] = []

    async def turn(self, subject_id: uuid.UUID) -> TurnLedger:
        try:
            return await self.inner.turn(subject_id)
        finally:
            self.ended.append(time.perf_counter())


def served_recall(
    runtime: Runtime,
    settings: Settings,
    backend: MemoryBackend,
    policies: RecallPolicies | None = None,
) -> tuple[Recall, TimedTurns]:
    """The recall a served process composes (`api.bootstrap.services.open_services`: the
    ledger's sources, forgets and turn read, the tenants' policies, the question heads) over
    `backend`, its turn read timed; `policies` in place of the settings' (a variant's)."""
    ledger, clock = runtime.ledger, runtime.ledger.clock
    forgets = LedgerForgets(ledger)
    timed = TimedTurns(LedgerTurns(ledger, forgets, clock=clock))
    sources = LedgerRecallSources(ledger, clock=clock)
    policies = policies or recall_policies(settings.recall)
    # The reader of asked fields over the backend's own embedder, as the runtime composed it.
    asked = None if runtime.recall is None else runtime.recall.ports.asked_fields
    # The statement head's reader of memories, as the runtime composed it (ADR 0154).
    statements = None if runtime.recall is None else runtime.recall.ports.statements
    ports = RecallPorts(
        backend,
        sources,
        policies,
        forgets=forgets,
        turns=timed,
        asked_fields=asked,
        statements=statements,
    )
    return Recall(ports), timed


@dataclass(slots=True)
class Split:
    """One recall's time, ms: its search, its wait for the ledger's turn read after the search
    ended, and the rest (recall's own work around the two)."""

    first: bool
    whole: float
    search: float
    ledger_wait: float

    @property
    def around(self) -> float:
        return self.whole - self.search


@dataclass(slots=True)
class Composed:
    """The runtimes the composed ways answer from (one each, so each meets all cold), and each
    recall's split (`Split`) in order."""

    searching: Runtime
    recalling: Runtime
    timed: TimedSearch
    splits: list[Split] = field(default_factory=list)
    beside: Runtime | None = None  # the beside policy's recall (`ContactCentreOptions`)


@asynccontextmanager
async def composed(settings: Settings, *, beside: bool = False) -> AsyncIterator[Composed]:
    async with AsyncExitStack() as stack:
        searching = await stack.enter_async_context(open_runtime(settings, RECALL_ONLY))
        recalling = await stack.enter_async_context(open_runtime(settings, RECALL_ONLY))
        if searching.backend is None or recalling.backend is None:
            raise RuntimeError("the composed ways need the runtime's memory backend")
        other = None
        if beside:
            other = await stack.enter_async_context(open_runtime(settings, RECALL_ONLY))
        yield Composed(searching, recalling, TimedSearch(recalling.backend), beside=other)


def beside_way(
    runtimes: Composed, settings: Settings, overrides: Mapping[str, object]
) -> tuple[Way, Call]:
    """`Recall.recall` as served on a runtime of its own, with `overrides` of the recall
    policy (a variant the product does not ship, injected here: its cost beside the default's
    in the same blocks)."""
    runtime = runtimes.beside
    if runtime is None or runtime.backend is None:
        raise RuntimeError("the beside way needs its runtime's memory backend")
    base = recall_policies(settings.recall).for_tenant(TENANT)
    # Validated as the settings validate a tenant's keys (bounds, types, unknown keys).
    values: dict[str, Any] = {f.name: getattr(base, f.name) for f in fields(RecallPolicy)}
    tenant = policy_of(TenantRecallSettings(**{**values, **overrides}))
    variant = RecallPolicies(default=tenant, tenants={TENANT: tenant})
    recall, _ = served_recall(runtime, settings, runtime.backend, variant)
    shown = ", ".join(f"{k}={v}" for k, v in overrides.items())
    way = Way(f"Recall.recall as served, {shown}")

    async def answer(subject: uuid.UUID, text: str) -> None:
        result = await recall.recall(subject, text, tenant=TENANT)
        way.degraded += result.degraded is not None

    return way, answer


def composed_ways(runtimes: Composed, settings: Settings) -> list[tuple[Way, Call]]:
    """Its backend's search as served, then `Recall.recall` as served."""
    backend = runtimes.searching.backend
    assert backend is not None  # noqa: S101 - `composed` checked it
    recall, turns = served_recall(runtimes.recalling, settings, runtimes.timed)
    met: set[uuid.UUID] = set()
    policy = recall_policies(settings.recall).for_tenant(TENANT)
    searched = Way("search as served (topic reader, calibrated)")
    recalled = Way("Recall.recall as served (ledger, topic reader)")

    async def search(subject: uuid.UUID, text: str) -> None:
        await backend.search(namespace_for(subject), wide_query(text, policy))

    async def answer(subject: uuid.UUID, text: str) -> None:
        started = time.perf_counter()
        result = await recall.recall(subject, text, tenant=TENANT)
        ended = time.perf_counter()
        recalled.degraded += result.degraded is not None
        (began, searched), read = runtimes.timed.spans[-1], turns.ended[-1]
        runtimes.splits.append(
            Split(
                first=subject not in met,
                whole=(ended - started) * 1e3,
                search=(searched - began) * 1e3,
                ledger_wait=max(read - searched, 0.0) * 1e3,
            )
        )
        met.add(subject)

    return [(searched, search), (recalled, answer)]


async def run_contact_centre(
    options: ContactCentreOptions, real: Embedder, model: str, echo: Callable[[str], None]
) -> list[str]:
    """The report's lines: the workload, each way's figures, the ratios to the floor."""
    lines, planned = await opening(options, real, echo)
    workdir = Path(tempfile.mkdtemp(prefix="factledger-contact-centre-"))
    server = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    opened: list[PgvectorMemoryBackend] = []
    try:
        await ensure_database(server.location, DATABASE)
        settings = served_settings(server.location, DATABASE, workdir / "data", model)
        planned = registered(planned, await register(settings, planned.subjects))
        config = embedded_config(server.location, dbname=DATABASE, pool_max=2)
        config = replace(config, search=replace(config.search, mirror=DATABASE_ONLY))

        async def backend(mirror: MirrorSettings) -> PgvectorMemoryBackend:
            opened.append(await open_backend(config, real, mirror))
            return opened[-1]

        database = await backend(DATABASE_ONLY)
        lines.append(await load_facts(config, planned, namespace_for))
        echo(lines[-1])
        ways = [floor_way(database, real), searching_way("database", database)]
        for n in options.earn_after:
            earned = await backend(MirrorSettings(earn_after=n, facts_per_search=None))
            ways.append(searching_way(f"mirror earned at search {n}, any size", earned))
        default = MirrorSettings(facts_per_search=options.facts_per_search)
        searched, recalled = await backend(default), await backend(default)
        ways.append(searching_way(f"search (default, {_earning(default)})", searched))
        ways.append(recalling_way(f"Recall.recall (default, {_earning(default)})", recalled))
        beside = options.beside_policy
        async with composed(settings, beside=beside is not None) as runtimes:
            ways += composed_ways(runtimes, settings)
            paired = list(ways)
            if beside is not None:
                ways.append(beside_way(runtimes, settings, beside))
            await warm_up(ways, planned)
            for way, _ in ways:
                way.degraded = 0  # the warm-up's answers are not the workload's
            runtimes.splits.clear()
            postmaster = server.postmaster_pid()
            await alternate(ways, planned.talks, lambda: server_cpu_seconds(postmaster))
            splits = runtimes.splits
    finally:
        for opened_backend in opened:
            await opened_backend.close()
        server.stop()
    lines += _report([way for way, _ in paired], splits)
    lines += _beside_lines([way for way, _ in ways[len(paired) :]], paired[-1][0], ways[0][0])
    lines.append(load_line("end"))
    return lines


def _earning(settings: MirrorSettings) -> str:
    """When `settings` mirror a namespace, for a way's name."""
    if settings.facts_per_search is None:
        return f"earned at {settings.earn_after}"
    return (
        f"earned at {settings.earn_after}, or a search per {settings.facts_per_search} facts, "
        f"at most {settings.earn_at_most}"
    )


def _report(ways: list[Way], splits: list[Split]) -> list[str]:
    """The table, what `Recall.recall` as served adds around its own search call by call,
    and the difference between the recall and search ways, bare and as served."""
    out = [*table(ways), *split_table(splits)]
    pairs = (("over the bare backend", ways[-4], ways[-3]), ("as served", ways[-2], ways[-1]))
    for name, searched, recalled in pairs:
        (s50, s95, _), (r50, r95, _) = percentiles(searched.timings), percentiles(recalled.timings)
        out.append(
            f"- Recall.recall minus the search way, {name}: p50 {r50:.2f} - {s50:.2f} = "
            f"**{r50 - s50:.2f} ms**; p95 {r95:.2f} - {s95:.2f} = {r95 - s95:.2f} ms"
        )
    return out


def _beside_lines(beside: list[Way], recalled: Way, floor: Way) -> list[str]:
    """The beside policy's way against `Recall.recall` as served, timed in the same blocks."""
    out = []
    (f50, f95, _), (r50, r95, _) = percentiles(floor.timings), percentiles(recalled.timings)
    for way in beside:
        b50, b95, _ = percentiles(way.timings)
        out += [
            f"- {way.name}: p50 / p95 {b50:.2f} / {b95:.2f} ms, p95 / floor p95 "
            f"{b95 / f95:.2f}x, degraded {way.degraded}, CPU per call "
            f"{way.client_cpu_s * 1e3 / max(len(way.timings), 1):.3f} ms",
            f"- Recall.recall as served (the settings' policy) minus it: p50 {r50:.2f} - "
            f"{b50:.2f} = **{r50 - b50:+.2f} ms**; p95 {r95:.2f} - {b95:.2f} = {r95 - b95:+.2f} ms"
            f" (floor p50 {f50:.2f})",
        ]
    return out


def split_table(splits: list[Split]) -> list[str]:
    """`Recall.recall` as served, call by call: the whole, its own search, the difference,
    and how much of that was waiting for the ledger's turn read (p50 / p95 ms)."""
    out = [
        "",
        "| `Recall.recall` as served, call by call | p50 / p95 ms, all | first turns | "
        "later turns |",
        "| --- | --- | --- | --- |",
    ]
    parts: dict[str, Callable[[Split], float]] = {
        "the recall": lambda s: s.whole,
        "its own search": lambda s: s.search,
        "**the recall minus its search**": lambda s: s.around,
        "of which waiting for the turn read": lambda s: s.ledger_wait,
    }
    for name, part in parts.items():
        cells = []
        for kept in ((True, False), (True,), (False,)):
            values = [part(s) for s in splits if s.first in kept]
            p50, p95, _ = percentiles(values) if values else (0.0, 0.0, 0.0)
            cells.append(f"{p50:.2f} / {p95:.2f}")
        out.append(f"| {name} | {' | '.join(cells)} |")
    return out
