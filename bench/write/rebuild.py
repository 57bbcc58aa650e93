"""Projection rebuild on the embedded default: a SQLite ledger of about `events` events (a
session and 49 proposals per save, on many subjects), then the profile views dropped and
replayed from the whole log, timed."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import structlog.testing

from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.commands import ProposeChange, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.bench.machine import load_average
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue

PROPOSALS_PER_SAVE = 49
SAVES_PER_SUBJECT = 20
AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class RebuildFigures:
    events: int
    seconds: float
    load_average: str

    @property
    def per_second(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def seed_ledger(ledger: Ledger, events: int) -> None:
    saves = max(1, events // (PROPOSALS_PER_SAVE + 1))
    subject_id = None
    for n in range(saves):
        if n % SAVES_PER_SUBJECT == 0:
            registered = ledger.register_subject(RegisterSubject("bench", "lead", f"r-{n}"))
            subject_id = registered.subject_id
        assert subject_id is not None  # noqa: S101 - registered on the first save
        session_id = f"s-{n}"
        said = Message(role=Role.SUBJECT, text="We buy from Acme.", at=AT)
        session = RecordSession("bench", subject_id, session_id, Channel.CHAT, AT, AT, (said,))
        proposals = [
            ProposeChange(
                tenant="bench",
                subject_id=subject_id,
                field=f"f{p}",
                operation=Operation.SET,
                value=TextValue("Acme"),
                origin=Origin.STATED,
                proposed_by=Actor(ActorKind.AGENT, "bench"),
                based_on_version=0,
                evidence=Evidence(session_id=session_id, message_index=0, quote="Acme"),
            )
            for p in range(PROPOSALS_PER_SAVE)
        ]
        ledger.end_session(session, proposals)


# Runs in the interpreter under test, so a baseline install replays the same ledger file.
_REBUILD = """
import sys, time
from pathlib import Path
import structlog.testing

from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.ledger import Ledger
from factledger.projections.profile_projection import ProfileProjection
work = Path(sys.argv[1])
keys = SqliteKeyStore(work / "keys.sqlite")
ledger = Ledger(sqlite_env(work / "ledger.sqlite"), keys=keys)
projection = ProfileProjection(SqliteViewStore(work / sys.argv[2], "profile"))
started = time.perf_counter()
count = projection.rebuild(ledger)
print(count, time.perf_counter() - started)
"""


def seeded(workdir: Path, *, events: int) -> Path:
    """A SQLite ledger of about `events` events in `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    keys = SqliteKeyStore(workdir / "keys.sqlite")
    ledger = Ledger(sqlite_env(workdir / "ledger.sqlite"), keys=keys)
    try:
        # Held, not printed: a line per save would bury the figures.
        with structlog.testing.capture_logs():
            seed_ledger(ledger, events)
    finally:
        ledger.close()
        keys.close()
    return workdir


def measure_rebuild(workdir: Path, python: str, *, run: int) -> RebuildFigures:
    """One rebuild of the views of the ledger in `workdir`, by `python`'s install."""
    views = f"views-{Path(python).parent.parent.name}-{run}.sqlite"
    out = subprocess.run(  # noqa: S603 - an interpreter the caller named, our own script
        [python, "-c", _REBUILD, str(workdir), views],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return RebuildFigures(int(out[-2]), float(out[-1]), load_average())
