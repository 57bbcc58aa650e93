"""Loading a subject in process, on subjects of 10, 1,000 and 10,000 events: the first load
of a process (a replay of the whole stream) and a load from the aggregate cache (what every
command pays: the new events, then a copy for the command), each build on the same file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import structlog.testing

from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.bench.machine import load_average
from factledger.bench.write.history import SIZES, seed_plan
from factledger.bench.write.rebuild import AT, PROPOSALS_PER_SAVE, acme_proposals
from factledger.bench.write.scripts import script_json
from factledger.domain.transcript import Channel, Message, Role

TENANT = "bench"
WARM_LOADS = 50


@dataclass(frozen=True, slots=True)
class LoadFigures:
    build: str
    size: int
    cold_ms: float  # a new process's first load: the whole stream replayed
    warm_ms: float  # median of cached loads (fast-forward and copy)
    load_average: str


def seeded(workdir: Path) -> dict[int, UUID]:
    """A SQLite ledger with one subject of each size in `SIZES`."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = SqliteKeyStore(workdir / "keys.sqlite")
    ledger = Ledger(sqlite_env(workdir / "ledger.sqlite"), keys=keys)
    try:
        return seed_subjects(ledger)
    finally:
        ledger.close()
        keys.close()


def seed_subjects(ledger: Ledger) -> dict[int, UUID]:
    """One subject of each size in `SIZES`, in the given ledger (any store)."""
    subjects: dict[int, UUID] = {}
    with structlog.testing.capture_logs():
        for size in SIZES:
            subject_id = ledger.register_subject(
                RegisterSubject(TENANT, "lead", f"loads-{size}")
            ).subject_id
            subjects[size] = subject_id
            for n, count in enumerate(seed_plan(size)):
                said = Message(role=Role.SUBJECT, text="We buy from Acme.", at=AT)
                session = RecordSession(TENANT, subject_id, f"s-{n}", Channel.CHAT, AT, AT, (said,))
                proposals = acme_proposals(
                    TENANT, subject_id, f"s-{n}", min(count, PROPOSALS_PER_SAVE)
                )
                ledger.end_session(session, proposals)
    return subjects


# Runs in the interpreter under test, so a baseline install loads the same ledger file.
_LOADS = """
import json, statistics, sys, time
from pathlib import Path
from uuid import UUID
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.ledger import Ledger
work, tenant, warm = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
keys = SqliteKeyStore(work / "keys.sqlite")
ledger = Ledger(sqlite_env(work / "ledger.sqlite"), keys=keys)
found = {}
for size, raw in json.loads(sys.argv[4]).items():
    subject_id = UUID(raw)
    started = time.perf_counter()
    ledger.subject(tenant, subject_id)
    cold = time.perf_counter() - started
    times = []
    for _ in range(warm):
        started = time.perf_counter()
        ledger.subject(tenant, subject_id)
        times.append(time.perf_counter() - started)
    found[size] = [cold * 1e3, statistics.median(times) * 1e3]
print(json.dumps(found))
"""


def measure_loads(
    workdir: Path, subjects: dict[int, UUID], python: str, build: str
) -> list[LoadFigures]:
    ids = json.dumps({str(size): str(subject) for size, subject in subjects.items()})
    found = script_json(python, _LOADS, str(workdir), TENANT, str(WARM_LOADS), ids)
    return [
        LoadFigures(build, int(size), cold, warm, load_average())
        for size, (cold, warm) in found.items()
    ]
