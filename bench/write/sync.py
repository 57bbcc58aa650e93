"""Sync throughput into pgvector: a PostgreSQL ledger of `sessions` recorded sessions (eight
messages, nine facts for the rule extractor each) for each build, then one `factledger worker`
runtime of each build drains its own into a pgvector schema of its own, timed from its first
pass to an empty queue, after the warm-up `factledger worker` runs before its first item. The
default embedder and extractor, as a deployment has them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import structlog.testing
from pydantic import SecretStr

from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.settings import Settings
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.bench.machine import load_average
from factledger.domain.transcript import Channel, Message, Role

AT = datetime(2026, 1, 1, tzinfo=UTC)
SAID = (
    "We now buy our flour from Zorblax{n}.",
    "My email is anna{n}@example.com.",
    "We have {n} employees.",
    "Our budget is {n} euros a month.",
    "I prefer to be called in the morning.",
    "We moved our office to Lyon.",
    "Our main competitor is Acme{n}.",
    "We use Salesforce as our CRM.",
)
SESSIONS_PER_SUBJECT = 2


@dataclass(frozen=True, slots=True)
class SyncFigures:
    build: str
    sessions: int
    facts: int
    records: int
    seconds: float
    cpu_seconds: float  # the worker processes', on every thread (ONNX inference included)
    load_average: str
    # PostgreSQL's server processes (the drain's backends, WAL writer, checkpointer) over
    # the drain; None where /proc is not there to read.
    server_cpu_seconds: float | None = None
    round: int = 1  # the builds take turns, round by round (`measure_sync`)

    @property
    def facts_per_second(self) -> float:
        return self.facts / self.seconds if self.seconds else 0.0

    @property
    def facts_per_cpu_second(self) -> float:
        """Less swayed by the machine's load than the rate: what a core does alone."""
        return self.facts / self.cpu_seconds if self.cpu_seconds else 0.0


def _proc_cpu_ticks(pid: int) -> tuple[int, int, int]:
    """(parent pid, own utime + stime, reaped children's cutime + cstime) from /proc, in ticks."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def server_cpu_seconds(postmaster: int | None) -> float | None:
    """CPU time of a PostgreSQL server so far: the postmaster, its live children, and the
    children it has reaped (a drain's backends end with its connections). Linux only."""
    if postmaster is None or not Path("/proc/self/stat").exists():
        return None
    _, own, reaped = _proc_cpu_ticks(postmaster)
    ticks = own + reaped
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(postmaster):
            try:
                parent, child_own, _ = _proc_cpu_ticks(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue  # gone, or not ours to read
            ticks += child_own if parent == postmaster else 0
    return ticks / os.sysconf("SC_CLK_TCK")


def url_of(location: PostgresLocation) -> str:
    auth = f"{location.user}:{location.password}"
    return f"postgresql://{auth}@/{location.dbname}?host={location.host}"


def server_env(location: PostgresLocation, workdir: Path, build: str) -> dict[str, str]:
    return {
        "FACTLEDGER_DATA_DIR": str(workdir / f"data-{build}"),
        "FACTLEDGER_DATABASE_URL": url_of(location),
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"events_{build}",
        "FACTLEDGER_VIEWS__KIND": "memory",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{build}",
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        "FACTLEDGER_BACKEND__SCHEMA_NAME": f"mem_{build}",
        "FACTLEDGER_LOG_JSON": "true",
    }


def seed(location: PostgresLocation, workdir: Path, sessions: int, build: str) -> None:
    """The ledger `build` drains (`events_<build>`): each build gets one of its own, the same
    sessions, because the drain records the proposer's reviews in its ledger and a drain of a
    ledger already reviewed does less (ADR 0103)."""
    settings = Settings(
        data_dir=workdir / f"seed-{build}",
        database_url=SecretStr(url_of(location)),
        event_store={"kind": "postgres", "schema_name": f"events_{build}"},
        views={"kind": "memory"},
    )
    with structlog.testing.capture_logs(), open_ledger_runtime(settings) as runtime:
        ledger, subject_id = runtime.ledger, None
        for n in range(sessions):
            if n % SESSIONS_PER_SUBJECT == 0:
                registered = ledger.register_subject(RegisterSubject("bench", "lead", f"s-{n}"))
                subject_id = registered.subject_id
            assert subject_id is not None  # noqa: S101 - registered on the first session
            said = tuple(Message(role=Role.SUBJECT, text=text.format(n=n), at=AT) for text in SAID)
            ledger.record_session(
                RecordSession("bench", subject_id, f"s-{n}", Channel.CHAT, AT, AT, said)
            )


# Runs in the interpreter under test (a baseline install drains the same ledger).
_DRAIN = """
import asyncio, sys, time
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import WORKER
from factledger.api.settings import load_settings

async def main():
    async with open_runtime(load_settings(), WORKER) as runtime:
        try:  # what `factledger worker` runs before it claims an item, untimed as there
            from factledger.api.bootstrap.warmup import warm_up_now
        except ImportError:  # a build from before the worker's warm-up
            warm_up_now = None
        if warm_up_now is not None:
            await asyncio.to_thread(warm_up_now)
        else:
            try:  # a build whose models load after its start: loaded before the drain is timed
                from factledger.adapters.embedding.onnx.embedder import finish_deferred_loads
            except ImportError:  # a build that loads them at start
                pass
            else:
                finish_deferred_loads()
            # The keyword lexicons are read at their first word, as a worker that has run a
            # while has them.
            from factledger.application.memory.inflection import fold_inflection
            fold_inflection("warming")
        worker = runtime.sync_worker
        started, cpu = time.time(), time.process_time()
        while True:
            report = await worker.run_once()
            if not (report.fed or report.done or report.retried or report.dead):
                break
        ended, cpu = time.time(), time.process_time() - cpu
    with open(sys.argv[1], "w") as out:
        out.write(f"{started} {ended} {cpu}")

asyncio.run(main())
"""


def drain(
    location: PostgresLocation,
    workdir: Path,
    python: str,
    build: str,
    *,
    postmaster: int | None = None,
    processes: int = 1,
) -> SyncFigures:
    """`processes` worker processes drain the queue side by side (as `factledger worker` runs
    on each core); the time is from the first one's start to the last one's end, the CPU
    their sum."""
    results = [workdir / f"drain-{build}-{n}.txt" for n in range(processes)]
    env = {**os.environ, **server_env(location, workdir, build)}
    server_before = server_cpu_seconds(postmaster)
    with contextlib.ExitStack() as logs:
        running = [
            subprocess.Popen(  # noqa: S603 - an interpreter the caller named, our own script
                [python, "-c", _DRAIN, str(result)],
                env=env,
                stdout=(log := logs.enter_context((workdir / f"{result.stem}.log").open("wb"))),
                stderr=log,
            )
            for result in results
        ]
        failed = [p.args for p in running if p.wait() != 0]
    if failed:
        raise subprocess.CalledProcessError(1, failed[0])
    time.sleep(0.5)  # the postmaster reaps the drain's backends (their CPU) once they exit
    server_after = server_cpu_seconds(postmaster)
    server = None if server_before is None or server_after is None else server_after - server_before
    spans = [[float(x) for x in result.read_text().split()] for result in results]
    seconds = max(end for _, end, _ in spans) - min(start for start, _, _ in spans)
    cpu_seconds = sum(cpu for _, _, cpu in spans)
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        facts = conn.execute(f"SELECT count(*) FROM mem_{build}.memories").fetchone()  # noqa: S608
        records = conn.execute(f"SELECT count(*) FROM mem_{build}.records").fetchone()  # noqa: S608
        sessions = conn.execute(f"SELECT count(*) FROM mem_{build}.documents").fetchone()  # noqa: S608
    return SyncFigures(
        build,
        sessions[0] if sessions else 0,
        facts[0] if facts else 0,
        records[0] if records else 0,
        seconds,
        cpu_seconds,
        load_average(),
        server,
    )


def measure_sync(
    workdir: Path,
    builds: list[tuple[str, str]],
    *,
    sessions: int,
    processes: int = 1,
    rounds: int = 1,
) -> list[SyncFigures]:
    """For each round and (build, python), seeds a ledger of the same sessions, then drains it
    into schemas of its own with `processes` worker processes; the builds take turns, every
    other round in the reverse order (a drain's place in a run sways it: the first pays for
    the server's upkeep of what was seeded)."""
    workdir.mkdir(parents=True, exist_ok=True)
    database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        postmaster = database.postmaster_pid()
        measured = []
        for round_no in range(1, rounds + 1):
            order = builds if round_no % 2 else builds[::-1]
            named = [
                (build if rounds == 1 else f"{build}_{round_no}", python) for build, python in order
            ]
            for name, _ in named:
                seed(database.location, workdir, sessions, name)
            for (build, _), (name, python) in zip(order, named, strict=True):
                figures = drain(
                    database.location,
                    workdir,
                    python,
                    name,
                    postmaster=postmaster,
                    processes=processes,
                )
                measured.append(replace(figures, build=build, round=round_no))
        return measured
    finally:
        database.stop()
