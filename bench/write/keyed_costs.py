"""What keyed subject ids and per-forget key work add to three ledger commands (ADRs 0082,
0083), on SQLite and PostgreSQL, without HTTP:

- registering a new reference: the look-up of a subject under the reference's legacy
  (uuid5) id before the keyed id is taken;
- recording a session: the read of the subject's fingerprint key (created by the subject's
  first session: `record`; read by its later ones: `record-again`);
- forgetting a memory by id (naming a line of a recorded session): the reads of the subject's
  recorded forgets and stream that decide whether its key must be rotated.

Each build (this install, or `--baseline-python`'s) runs the same script in its own
interpreter; in it, operation by operation, the ledger as shipped ("with") alternates with
the same ledger with the step taken out by the lab ("without": no legacy look-up, a
fingerprint key the lab holds instead of the read, no rotation check), on new references.
Printed per command: the median wall and CPU milliseconds of one operation. The script
reaches only names every build since those ADRs has, so a baseline install runs it
unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.bench.machine import load_average
from factledger.bench.write.scripts import script_json, store_lines

TURNS = 4
OPERATIONS = 150  # of each command, per turn and variant
SCHEMA = "keyed_costs"
COMMANDS = ("register", "record", "record-again", "forget")

# Runs in the interpreter under test: only names that every build has.
_SCRIPT = (
    """
import json, statistics, sys, time, uuid
from datetime import UTC, datetime
from pathlib import Path
import structlog.testing
from factledger.application.ledger.commands import ForgetMemory, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role
store, where, turns, operations = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
"""
    + store_lines(SCHEMA)
    + """\
ledger = Ledger(env, keys=keys)
shipped = {n: getattr(ledger, n) for n in ("fingerprint_key", "_rotate_if_needed")}
shipped_registered = ledger.subject_ids._registered
TENANT, AT = "bench", datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LINES = (Message(Role.AGENT, "What do you spend a year?", AT),
         Message(Role.SUBJECT, "About 40k, with Acme as our supplier.", AT))
STAFF = Actor(ActorKind.STAFF, "bench")

def strip(variant):
    # "without": the lab takes out the step each command gained; "with": as shipped.
    for name, method in shipped.items():
        vars(ledger).pop(name, None)
    ledger.subject_ids._registered = shipped_registered
    if variant == "with":
        return
    ledger.subject_ids._registered = lambda subject_id: False
    ledger.fingerprint_key = lambda subject, *session: b"k" * 32
    ledger._rotate_if_needed = lambda subject: None

samples = {}

def run(variant, command, action):
    strip(variant)
    wall, cpu = time.perf_counter(), time.process_time()
    out = action()
    spent = ((time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3)
    samples.setdefault(f"{variant}/{command}", []).append(spent)
    return out

def register(ref):
    return lambda: ledger.register_subject(RegisterSubject(TENANT, "lead", ref)).subject_id

def record(subject_id, session_id):
    return lambda: ledger.record_session(
        RecordSession(TENANT, subject_id, session_id, Channel.VOICE, AT, AT, LINES))

def forget(subject_id):
    return lambda: ledger.forget_memory(ForgetMemory(
        TENANT, subject_id, "memory-1", STAFF, "asked by the lead",
        evidence_refs=(("call-1", 1),)))

with structlog.testing.capture_logs():
    ledger.recorder.max_notification_id()  # the connection, not the first command
    ledger.subject_ids.key()  # the deployment's key, read once per process in both variants
    for turn in range(turns):
        # Operation by operation, the variants alternate (and which goes first), so the
        # machine's load moves both alike.
        orders = [("with", "without") if n % 2 == 0 else ("without", "with")
                  for n in range(operations)]
        ids = {"with": [], "without": []}
        for n, order in enumerate(orders):
            for v in order:
                ref = f"{v}-{turn}-{n}-{uuid.uuid4().hex[:8]}"
                ids[v].append(run(v, "register", register(ref)))
        for command, session_id in (("record", "call-1"), ("record-again", "call-2")):
            for n, order in enumerate(orders):
                for v in order:
                    run(v, command, record(ids[v][n], session_id))
        for n, order in enumerate(orders):
            for v in order:
                run(v, "forget", forget(ids[v][n]))
    strip("with")
ledger.close()
print(json.dumps({name: [statistics.median(w for w, _ in runs),
                         statistics.median(c for _, c in runs)]
                  for name, runs in samples.items()}))
"""
)


@dataclass(frozen=True, slots=True)
class KeyedCost:
    store: str
    build: str
    command: str
    with_ms: float  # the median operation's
    with_cpu_ms: float
    without_ms: float
    without_cpu_ms: float
    load_average: str

    @property
    def cpu_share(self) -> float:
        """What the step costs, as a share of the command's CPU time with it."""
        return 1 - self.without_cpu_ms / self.with_cpu_ms if self.with_cpu_ms else 0.0


@contextmanager
def stores(workdir: Path) -> Iterator[list[tuple[str, str]]]:
    """An empty SQLite ledger's folder and an embedded PostgreSQL server: (store, where)."""
    sqlite_dir = workdir / "sqlite"
    sqlite_dir.mkdir(parents=True, exist_ok=True)
    database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        where = json.dumps(dataclasses.asdict(database.location))
        yield [("SQLite", str(sqlite_dir)), ("PostgreSQL", where)]
    finally:
        database.stop()


def measure_keyed_costs(store: str, where: str, python: str, build: str) -> list[KeyedCost]:
    found = script_json(python, _SCRIPT, store, where, str(TURNS), str(OPERATIONS))
    return [
        KeyedCost(
            store=store,
            build=build,
            command=command,
            with_ms=found[f"with/{command}"][0],
            with_cpu_ms=found[f"with/{command}"][1],
            without_ms=found[f"without/{command}"][0],
            without_cpu_ms=found[f"without/{command}"][1],
            load_average=load_average(),
        )
        for command in COMMANDS
    ]


def keyed_costs_table(costs: list[KeyedCost]) -> str:
    lines = [
        "\n| store | build | command | with ms | with CPU ms | without ms | without CPU ms | "
        "CPU share of the step | load avg |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {c.store} | {c.build} | {c.command} | {c.with_ms:.2f} | {c.with_cpu_ms:.2f} | "
        f"{c.without_ms:.2f} | {c.without_cpu_ms:.2f} | {c.cpu_share:.0%} | {c.load_average} |"
        for c in costs
    )
    return "\n".join(lines)
