"""`factledger-lab pgvector contact-centre-served`: the contact centre's recalls over HTTP.

The workload of `contact_centre` (same seed, same subjects, facts and conversations) sent to
a `factledger serve` process on the PostgreSQL topology with pgvector (the embedded server),
embedding with the packaged model as the in-process ways do:

- the subjects are registered through the API (a service token), one per customer reference,
  so an agent token bound to the reference passes the subject check a recall makes;
- the served process is then stopped, the facts COPYed into each registered subject's
  namespace, and the process started again: it meets every subject and namespace cold, as a
  process of a contact centre meets most of its callers;
- each conversation's turns are recalls (`POST /v1/subjects/me/recall`) with an agent token of
  its own subject, one at a time over loopback, in blocks of conversations alternating with
  the floor (the query embedding in this process + the bare exact search in the namespace,
  as `contact_centre`'s) and a `/healthz` round trip (the bare HTTP cost).

The goal (issue 37): recall's p95 at most 1.5x the floor's p95 plus `/healthz`'s. The served
process's `Server-Timing` splits each recall into its time in the app and inside
`Recall.recall`.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import embedded_config
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.api.http.auth import SubjectClaim
from factledger.application.memory.ports import Embedder
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import Namespace
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
    table,
    warm_up,
)
from factledger.bench.pgvector.floor import FLOOR_RATIO_TARGET
from factledger.bench.pgvector.measure import percentiles
from factledger.bench.pgvector.strategies import DATABASE_ONLY
from factledger.bench.pgvector.turns import server_cpu_seconds
from factledger.bench.recall_served import bearer, served_env, serving, timing_parts
from factledger.bench.serve_start import postgres_stores

DATABASE = "factledger_contact_centre_served"
KIND = "customer"
QUIET_CPU = 0.1  # CPU seconds in a second: a served process that has finished starting
SETTLE_TIMEOUT_S = 180.0


@dataclass(slots=True)
class Splits:
    """The served process's own account of each recall (`Server-Timing`), ms."""

    wall: list[float] = field(default_factory=list)  # at the client
    app: list[float] = field(default_factory=list)
    use: list[float] = field(default_factory=list)
    first: list[bool] = field(default_factory=list)  # the conversation's first turn
    notes: int = 0
    _met: set[uuid.UUID] = field(default_factory=set)

    def add(self, subject: uuid.UUID, wall: float, header: str) -> None:
        parts = timing_parts(header)
        self.wall.append(wall)
        self.app.append(parts["app"])
        self.use.append(parts.get("use", 0.0))  # an answer shed before recall has no `use`
        self.first.append(subject not in self._met)
        self._met.add(subject)

    def outside(self) -> list[float]:
        return [a - u for a, u in zip(self.app, self.use, strict=True)]

    def wire(self) -> list[float]:
        return [w - a for w, a in zip(self.wall, self.app, strict=True)]


async def run_served(
    options: ContactCentreOptions, real: Embedder, model: str, echo: Callable[[str], None]
) -> list[str]:
    """The report's lines: the workload, the three ways' figures, the goal's ratio."""
    lines, planned = await opening(options, real, echo)
    workdir = Path(tempfile.mkdtemp(prefix="factledger-contact-centre-served-"))
    server = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        env = {
            **served_env(workdir / "data"),
            **postgres_stores(server.location)(DATABASE),
            "FACTLEDGER_EMBEDDER__MODEL": model,
            "FACTLEDGER_EMBEDDER__CACHE_DIR": str(workdir / "graph-cache"),
            # No vector cache: every recall embeds its query live, as the floor does.
            "FACTLEDGER_EMBEDDER__CACHED_VECTORS": "0",
        }
        with serving(env, options.serve_with) as (http, _):
            served_ids = _register(http, planned.subjects)
        lines.append(f"registered {len(served_ids):,} subjects through the API")
        echo(lines[-1])
        config = embedded_config(server.location, dbname=DATABASE, pool_max=2)

        def namespace_of(subject: uuid.UUID) -> Namespace:
            return namespace_for(served_ids[subject])

        lines.append(await load_facts(config, planned, namespace_of))
        echo(lines[-1])
        with ExitStack() as running:
            served = [running.enter_context(serving(env, exe)) for exe in builds_to_serve(options)]
            for _, process in served:
                lines.append(await _settled(process.pid))
                echo(lines[-1])
            async with AsyncExitStack() as stack:
                database = await open_backend(config, real, DATABASE_ONLY)
                stack.push_async_callback(database.close)
                clients = [
                    await stack.enter_async_context(
                        httpx.AsyncClient(base_url=http.base_url, timeout=30)
                    )
                    for http, _ in served
                ]
                await warm_up(
                    served_ways(database, real, clients, planned, _splits(clients), namespace_of),
                    planned,
                )
                splits = _splits(clients)
                ways = served_ways(database, real, clients, planned, splits, namespace_of)
                postmaster = server.postmaster_pid()
                pids = [process.pid for _, process in served]
                await alternate(
                    ways,
                    planned.talks,
                    lambda: (
                        server_cpu_seconds(postmaster)
                        + sum(server_cpu_seconds(pid) for pid in pids)
                    ),
                )
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)  # the served data and the graph cache
    timed = [way for way, _ in ways]
    for n, build in enumerate(splits):
        if len(splits) > 1:
            lines += ["", f"**build {BUILDS[n]}** ({_BUILD_NOTES[n]})", ""]
        lines += _report([timed[0], *timed[1 + 2 * n : 3 + 2 * n]], build)
    lines.append(load_line("end"))
    return lines


BUILDS = ("A", "B")
_BUILD_NOTES = ("`--serve-with`, or this install's", "`--served-beside`")


def builds_to_serve(options: ContactCentreOptions) -> list[Path | None]:
    """The `factledger` executables to serve with: the first build's, and the one beside it."""
    beside = options.served_beside
    return [options.serve_with] if beside is None else [options.serve_with, beside]


def _splits(clients: list[httpx.AsyncClient]) -> list[Splits]:
    return [Splits() for _ in clients]


def served_ways(
    database: PgvectorMemoryBackend,
    real: Embedder,
    clients: list[httpx.AsyncClient],
    planned: Planned,
    splits: list[Splits],
    namespace_of: Callable[[uuid.UUID], Namespace] = namespace_for,
) -> list[tuple[Way, Call]]:
    """The floor (in the namespace `namespace_of` gives the subject: where the served process
    holds its facts), then each build's `/healthz` and recall (named by build when there are
    two)."""
    ways = [floor_way(database, real, namespace_of)]
    for n, (client, build) in enumerate(zip(clients, splits, strict=True)):
        healthz, recalling = _healthz(client), _recalling(client, planned, build)
        if len(clients) > 1:
            for way, _ in (healthz, recalling):
                way.name = f"{way.name}, build {BUILDS[n]}"
        ways += [healthz, recalling]
    return ways


async def _settled(pid: int) -> str:
    """Waits until the served process has done what it defers past readiness (the MCP SDK's
    import, the models' loads): the conversations meet a process that has finished starting,
    as most of a contact centre's calls do. Quiet: under `QUIET_CPU` of a core for a second."""
    started = time.monotonic()
    used = server_cpu_seconds(pid)
    while time.monotonic() - started < SETTLE_TIMEOUT_S:
        await asyncio.sleep(1.0)
        now = server_cpu_seconds(pid)
        if now - used < QUIET_CPU:
            break
        used = now
    return f"served process quiet {time.monotonic() - started:.0f} s after ready"


def _register(http: httpx.Client, subjects: list[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """Each subject registered under its reference; the served process's id for it."""
    service = bearer(None)
    served = {}
    for subject in subjects:
        body = {"kind": KIND, "external_ref": subject.hex}
        answer = http.post("/v1/subjects", json=body, headers=service)
        answer.raise_for_status()
        served[subject] = uuid.UUID(answer.json()["subject_id"])
    return served


def _healthz(client: httpx.AsyncClient) -> tuple[Way, Call]:
    async def call(_: uuid.UUID, __: str) -> None:
        (await client.get("/healthz")).raise_for_status()

    return Way("`/healthz` round trip"), call


def _recalling(client: httpx.AsyncClient, planned: Planned, splits: Splits) -> tuple[Way, Call]:
    """Recall over HTTP with an agent token bound to the conversation's subject."""
    tokens = {s: bearer(SubjectClaim(kind=KIND, ref=s.hex)) for s in planned.subjects}
    way = Way("recall over HTTP (agent token)")

    async def call(subject: uuid.UUID, text: str) -> None:
        started = time.perf_counter()
        answer = await client.post(
            "/v1/subjects/me/recall", json={"query": text}, headers=tokens[subject]
        )
        wall = (time.perf_counter() - started) * 1e3
        answer.raise_for_status()
        splits.add(subject, wall, answer.headers.get("server-timing", ""))
        body = answer.json()
        way.degraded += body["degraded"] is not None
        splits.notes += len(body["notes"])

    return way, call


_TURNS: dict[str, Callable[[Way], list[float]]] = {
    "all turns": lambda way: way.timings,
    "first turns": lambda way: way.firsts,
    "later turns": lambda way: way.later,
}


def _report(ways: list[Way], splits: Splits) -> list[str]:
    floor, healthz, recall = ways
    out = table(ways)
    for name, turns in _TURNS.items():
        if not (turns(recall) and turns(floor) and turns(healthz)):
            continue
        recall_p95 = percentiles(turns(recall))[1]
        bound = percentiles(turns(floor))[1] + percentiles(turns(healthz))[1]
        out.append(
            f"- {name}: recall p95 / (floor p95 + `/healthz` p95) = {recall_p95:.2f} / "
            f"{bound:.2f} = **{recall_p95 / bound:.2f}x** (goal <= {FLOOR_RATIO_TARGET}x)"
        )
    out += [
        f"- notes per recall: {splits.notes / max(len(splits.app), 1):.1f}; CPU per call: "
        "this process (floor, client) + PostgreSQL's and `factledger serve`'s",
        "",
        "| recall on the served process (`Server-Timing`) | p50 / p95 ms, all | first turns "
        "| later turns |",
        "| --- | --- | --- | --- |",
    ]
    for name, values in (
        ("in the app (`app`)", splits.app),
        ("inside `Recall.recall` (`use`)", splits.use),
        ("**in the app outside `Recall.recall` (app - use)**", splits.outside()),
        ("outside the app (client wall - app)", splits.wire()),
    ):
        cells = [
            _p50_p95([v for v, first in zip(values, splits.first, strict=True) if first in kept])
            for kept in ((True, False), (True,), (False,))
        ]
        out.append(f"| {name} | {' | '.join(cells)} |")
    return out


def _p50_p95(values: list[float]) -> str:
    if not values:
        return "-"
    p50, p95, _ = percentiles(values)
    return f"{p50:.2f} / {p95:.2f}"
