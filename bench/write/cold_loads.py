"""A process's first load of a subject of 10, 1,000 and 10,000 events, with snapshots and
with the whole stream replayed, on SQLite and PostgreSQL (ADR 0034).

Each turn opens a new ledger (nothing cached: neither subjects nor keys), loads every subject
once with snapshots, then once more in a ledger that ignores them
(`FACTLEDGER_SNAPSHOT_INTERVAL=0`); the turns alternate, so both see the same machine. Wall
time and this process's CPU time are both printed: the machine is shared and its load moves
the wall time far more than the CPU time (PostgreSQL's own CPU is not in it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.ledger import Ledger
from factledger.bench.machine import load_average
from factledger.bench.write.loads import TENANT, seed_subjects
from factledger.bench.write.scripts import script_json, store_lines

TURNS = 5
SCHEMA = "cold_loads"


@dataclass(frozen=True, slots=True)
class ColdLoad:
    store: str
    size: int
    tail: int  # events after the newest snapshot
    snapshot_ms: float  # medians over the turns
    snapshot_cpu_ms: float
    replay_ms: float
    replay_cpu_ms: float
    seal_cpu_ms: float  # what taking the snapshot costs the saving thread
    load_average: str


@contextmanager
def seeded_stores(workdir: Path) -> Iterator[list[tuple[str, str, dict[int, UUID]]]]:
    """SQLite and PostgreSQL ledgers, each with one subject of every size: (store, where, ids)."""
    sqlite_dir = workdir / "sqlite"
    sqlite_dir.mkdir(parents=True, exist_ok=True)
    keys = SqliteKeyStore(sqlite_dir / "keys.sqlite")
    ledger = Ledger(sqlite_env(sqlite_dir / "ledger.sqlite"), keys=keys)
    try:
        sqlite_ids = seed_subjects(ledger)
    finally:
        ledger.close()
        keys.close()
    database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
    try:
        pg_keys = PostgresKeyStore(database.location.conninfo, schema=SCHEMA)
        pg_ledger = Ledger(postgres_env(database.location, schema=SCHEMA), keys=pg_keys)
        try:
            pg_ids = seed_subjects(pg_ledger)
        finally:
            pg_ledger.close()
            pg_keys.close()
        where = json.dumps(dataclasses.asdict(database.location))
        yield [("SQLite", str(sqlite_dir), sqlite_ids), ("PostgreSQL", where, pg_ids)]
    finally:
        database.stop()


# Runs in the interpreter under test.
_COLD = (
    """
import json, statistics, sys, time
from pathlib import Path
from uuid import UUID
import structlog.testing
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.snapshots import codec
store, where, tenant, turns, raw_ids = sys.argv[1:6]
ids = {int(size): UUID(raw) for size, raw in json.loads(raw_ids).items()}
"""
    + store_lines(SCHEMA)
    + """\
found = {size: {"snapshot": [], "snapshot_cpu": [], "replay": [], "replay_cpu": []} for size in ids}
with structlog.testing.capture_logs():
    for turn in range(int(turns)):
        for mode, interval in (("snapshot", "100"), ("replay", "0")):
            ledger = Ledger({**env, "FACTLEDGER_SNAPSHOT_INTERVAL": interval}, keys=keys)
            ledger.recorder.max_notification_id()  # the connection, not the load
            for size, subject_id in ids.items():
                wall, cpu = time.perf_counter(), time.process_time()
                subject = ledger.subject(tenant, subject_id)
                found[size][mode].append((time.perf_counter() - wall) * 1e3)
                found[size][mode + "_cpu"].append((time.process_time() - cpu) * 1e3)
                if mode == "snapshot" and turn == 0:
                    latest = ledger.subject_snapshots.latest(subject_id)
                    found[size]["tail"] = subject.version - (latest.version if latest else 0)
                    cpu = time.process_time()
                    codec.seal(vars(subject), subject.id, subject.version, keys)
                    found[size]["seal_cpu"] = (time.process_time() - cpu) * 1e3
            ledger.close()
print(json.dumps({s: {k: (statistics.median(v) if isinstance(v, list) else v)
                      for k, v in f.items()} for s, f in found.items()}))
"""
)


def measure_cold_loads(
    store: str, where: str, subjects: dict[int, UUID], python: str
) -> list[ColdLoad]:
    ids = json.dumps({str(size): str(subject) for size, subject in subjects.items()})
    found = script_json(python, _COLD, store, where, TENANT, str(TURNS), ids)
    return [
        ColdLoad(
            store=store,
            size=int(size),
            tail=int(f["tail"]),
            snapshot_ms=f["snapshot"],
            snapshot_cpu_ms=f["snapshot_cpu"],
            replay_ms=f["replay"],
            replay_cpu_ms=f["replay_cpu"],
            seal_cpu_ms=f["seal_cpu"],
            load_average=load_average(),
        )
        for size, f in found.items()
    ]
