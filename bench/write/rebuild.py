"""Projection rebuild: a ledger of about `events` events (a session and 49 proposals per
save, on many subjects), in SQLite (the embedded default, views in a SQLite file) or in
PostgreSQL (views in a schema of the same server), then the profile views dropped and
replayed from the whole log, timed."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import structlog.testing

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.commands import ProposeChange, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.bench.machine import load_average
from factledger.bench.write.run import label
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue

PROPOSALS_PER_SAVE = 49
SAVES_PER_SUBJECT = 20
AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class RebuildFigures:
    build: str
    events: int
    seconds: float
    cpu_seconds: float  # the rebuilding process's (PostgreSQL's own work is not in it)
    load_average: str
    # PostgreSQL's processes (the rebuild's connections and the server's own writers) over the
    # rebuild; 0 on SQLite, whose work is in the rebuilding process.
    server_cpu_seconds: float = 0.0
    # The rebuilding process's main thread: seconds on a core, and seconds runnable but queued
    # for one (the machine's other work); both 0 without Linux's schedstat.
    main_ran_s: float = 0.0
    main_queued_s: float = 0.0

    @property
    def main_blocked_s(self) -> float:
        """Seconds the main thread was neither on a core nor queued for one: waiting for the
        database, the read-ahead thread or the interpreter's lock. On a machine with a core
        free, the wall time would be about this plus the time it ran."""
        return max(0.0, self.seconds - self.main_ran_s - self.main_queued_s)

    @property
    def per_cpu_second_with_server(self) -> float:
        """Events per CPU second of the rebuilding process and the database server together:
        what two cores share."""
        total = self.cpu_seconds + self.server_cpu_seconds
        return self.events / total if total else 0.0

    @property
    def per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0

    @property
    def per_cpu_second(self) -> float:
        return self.events / self.cpu_seconds if self.cpu_seconds else 0.0


# A longer line of a transcript: a contact-centre call's turn, about 200 characters.
LONG_LINE = (
    "Yes, we still buy our flour from Acme. Two pallets come every other Tuesday. The last "
    "delivery came a day late, and the driver did not find the loading bay behind the bakery."
)


def transcript(messages: int) -> tuple[Message, ...]:
    """The session's lines: one short line, or `messages` long ones, turns taken in order."""
    if messages <= 1:
        return (Message(role=Role.SUBJECT, text="We buy from Acme.", at=AT),)
    roles = (Role.SUBJECT, Role.AGENT)
    return tuple(Message(role=roles[n % 2], text=LONG_LINE, at=AT) for n in range(messages))


def seed_ledger(ledger: Ledger, events: int, *, messages: int = 1) -> None:
    """About `events` events; each session's transcript has `messages` lines (`transcript`)."""
    saves = max(1, events // (PROPOSALS_PER_SAVE + 1))
    said = transcript(messages)
    subject_id = None
    for n in range(saves):
        if n % SAVES_PER_SUBJECT == 0:
            registered = ledger.register_subject(RegisterSubject("bench", "lead", f"r-{n}"))
            subject_id = registered.subject_id
        assert subject_id is not None  # noqa: S101 - registered on the first save
        session_id = f"s-{n}"
        session = RecordSession("bench", subject_id, session_id, Channel.CHAT, AT, AT, said)
        proposals = acme_proposals("bench", subject_id, session_id, PROPOSALS_PER_SAVE)
        ledger.end_session(session, proposals)


def acme_proposals(
    tenant: str, subject_id: UUID, session_id: str, count: int
) -> list[ProposeChange]:
    """`count` stated proposals of fields f0, f1, ..., each quoting the session's message."""
    return [
        ProposeChange(
            tenant=tenant,
            subject_id=subject_id,
            field=f"f{p}",
            operation=Operation.SET,
            value=TextValue("Acme"),
            origin=Origin.STATED,
            proposed_by=Actor(ActorKind.AGENT, "bench"),
            based_on_version=0,
            evidence=Evidence(session_id=session_id, message_index=0, quote="Acme"),
        )
        for p in range(count)
    ]


# Runs in the interpreter under test, so a baseline install replays the same ledger. argv:
# the ledger's directory (SQLite) or its server (PostgreSQL, JSON), and where the views go.
_REBUILD = """
import json, sys, time
from pathlib import Path

from factledger.application.ledger.ledger import Ledger
try:
    from factledger.projections.profile.projection import ProfileProjection
except ModuleNotFoundError:  # a baseline from before the profile projection's subpackage
    from factledger.projections.profile_projection import ProfileProjection

kind, where, views = sys.argv[1:4]
if kind == "sqlite":
    from factledger.adapters.sqlite.event_store import sqlite_env
    from factledger.adapters.sqlite.key_store import SqliteKeyStore
    from factledger.adapters.sqlite.view_store import SqliteViewStore
    work = Path(where)
    keys = SqliteKeyStore(work / "keys.sqlite")
    ledger = Ledger(sqlite_env(work / "ledger.sqlite"), keys=keys)
    store = SqliteViewStore(work / views, "profile")
else:
    from factledger.adapters.postgres.event_store import postgres_env
    from factledger.adapters.postgres.key_store import PostgresKeyStore
    from factledger.adapters.postgres.view_store import PostgresViewStore
    from factledger.adapters.postgres_server import PostgresLocation
    location = PostgresLocation(**json.loads(where))
    keys = PostgresKeyStore(location.conninfo, schema="rebuild_ledger")
    ledger = Ledger(postgres_env(location, schema="rebuild_ledger"), keys=keys)
    store = PostgresViewStore(location.conninfo, "profile", schema=views)
projection = ProfileProjection(store)


# CPU seconds of every process of the PostgreSQL server this script talks to (0 on SQLite):
# the postmaster that started this connection's backend, its live children, and those it has
# reaped (a backend that ends between two readings moves its time there: the sum never drops).
def server_cpu():
    if kind == "sqlite":
        return 0.0
    import os, psycopg
    def stat(pid):
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    with psycopg.connect(location.conninfo) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        postmaster, ticks = int(stat(backend)[1]), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = stat(pid)
        except OSError:
            continue
        if pid == str(postmaster):
            ticks += sum(int(field) for field in fields[11:15])
        elif int(fields[1]) == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


# Seconds this (main) thread has run and has waited for a core: Linux's schedstat, or zeros.
def main_thread():
    import os
    try:
        with open(f"/proc/self/task/{os.getpid()}/schedstat") as f:
            ran, queued, _ = f.read().split()
    except (OSError, ValueError):
        return 0.0, 0.0
    return int(ran) / 1e9, int(queued) / 1e9


server, (ran, queued) = server_cpu(), main_thread()
started, cpu = time.perf_counter(), time.process_time()
count = projection.rebuild(ledger)
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
after = main_thread()
print(count, wall, cpu, server_cpu() - server, after[0] - ran, after[1] - queued)
"""


def seeded(workdir: Path, *, events: int, messages: int = 1) -> Path:
    """A SQLite ledger of about `events` events in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = SqliteKeyStore(workdir / "keys.sqlite")
    ledger = Ledger(sqlite_env(workdir / "ledger.sqlite"), keys=keys)
    _seed_quietly(ledger, keys, events, messages)
    return workdir


def seeded_postgres(location: PostgresLocation, *, events: int, messages: int = 1) -> None:
    """A PostgreSQL ledger of about `events` events in the schema `rebuild_ledger`."""
    keys = PostgresKeyStore(location.conninfo, schema="rebuild_ledger")
    ledger = Ledger(postgres_env(location, schema="rebuild_ledger"), keys=keys)
    _seed_quietly(ledger, keys, events, messages)


def _seed_quietly(
    ledger: Ledger, keys: SqliteKeyStore | PostgresKeyStore, events: int, messages: int
) -> None:
    try:
        # Held, not printed: a line per save would bury the figures.
        with structlog.testing.capture_logs():
            seed_ledger(ledger, events, messages=messages)
    finally:
        ledger.close()
        keys.close()


def measure_rebuild(workdir: Path, python: str, *, run: int) -> RebuildFigures:
    """One rebuild of the views of the SQLite ledger in `workdir`, by `python`'s install."""
    views = f"views-{label(python)}-{run}.sqlite"
    return _rebuild(python, "sqlite", str(workdir), views)


def measure_rebuild_postgres(
    location: PostgresLocation, python: str, *, run: int
) -> RebuildFigures:
    """One rebuild of the PostgreSQL ledger's views, into a schema of their own."""
    where = json.dumps(dataclasses.asdict(location))
    return _rebuild(python, "postgres", where, f"views_{label(python)}_{run}")


def _rebuild(python: str, kind: str, where: str, views: str) -> RebuildFigures:
    done = subprocess.run(  # noqa: S603 - an interpreter the caller named, our own script
        [python, "-c", _REBUILD, kind, where, views], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"rebuild by {label(python)} on {kind} failed: {last}")
    return figures_printed(label(python), done.stdout, load_average())


def figures_printed(build: str, stdout: str, load: str) -> RebuildFigures:
    """The figures the rebuild script printed last: events, wall, CPU and the server's CPU
    seconds, then its main thread's seconds run and queued for a core."""
    events, wall, cpu, server, ran, queued = stdout.split()[-6:]
    return RebuildFigures(
        build,
        int(events),
        float(wall),
        float(cpu),
        load,
        server_cpu_seconds=float(server),
        main_ran_s=float(ran),
        main_queued_s=float(queued),
    )


def rebuilds(
    workdir: Path, builds: list[str], *, events: int, runs: int = 3, messages: int = 1
) -> Iterator[tuple[str, RebuildFigures]]:
    """Each store's ledger seeded once (sessions of `messages` lines), then `runs` rebuilds by
    each build, taking turns."""
    ledger_dir = seeded(workdir / "sqlite", events=events, messages=messages)
    for run in range(runs):
        for python in builds:
            yield "SQLite", measure_rebuild(ledger_dir, python, run=run)
    database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        seeded_postgres(database.location, events=events, messages=messages)
        for run in range(runs):
            for python in builds:
                yield "PostgreSQL", measure_rebuild_postgres(database.location, python, run=run)
    finally:
        database.stop()
