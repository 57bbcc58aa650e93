"""A ledger process SIGKILLed while its writer threads' saves share transactions (ADR 0027):
every command it answered is in the store, none twice, each subject's versions dense; a
rerun of every command (the clients' retries) records what was missing, once."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import ChangeProposed

pytestmark = pytest.mark.integration
WORKER = Path(__file__).parent.parent / "support" / "ledger_writer_worker.py"
# Far more commands than the kill waits for: the worker must still be writing when this
# process, however slow to read its answers on a loaded machine, sends the kill.
THREADS, COMMANDS, SUBJECTS_PER_THREAD = 8, 150, 2
KILL_AFTER_ANSWERS = 150


def run_writers(location: PostgresLocation, schema: str, *, kill: bool) -> set[str]:
    """The commands the process answered (all of them, unless it was killed)."""
    where = json.dumps(dataclasses.asdict(location))
    process = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, str(WORKER), where, schema, str(THREADS), str(COMMANDS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    answered: set[str] = set()
    try:
        for line in process.stdout:
            if line.startswith("answered "):
                answered.add(line.split()[1])
                if kill and len(answered) >= KILL_AFTER_ANSWERS:
                    os.kill(process.pid, signal.SIGKILL)
                    break
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if kill:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 0
    return answered


def recorded(location: PostgresLocation, schema: str) -> Counter[str]:
    """Each recorded proposal's field, counted; and the versions checked dense on the way."""
    keys = PostgresKeyStore(location.conninfo, schema=schema)
    ledger = Ledger(postgres_env(location, schema=schema), keys=keys)
    try:
        fields: Counter[str] = Counter()
        for thread in range(THREADS):
            for s in range(SUBJECTS_PER_THREAD):
                subject_id = ledger.subject_id_for("acme", "lead", f"w-{thread}-{s}")
                events = list(ledger.repository.event_store.get(subject_id))
                versions = [e.originator_version for e in events]
                assert versions == list(range(1, len(versions) + 1))
                fields.update(e.field for e in events if isinstance(e, ChangeProposed))
        return fields
    finally:
        ledger.close()
        keys.close()


def test_a_killed_ledger_process_loses_no_answered_save_and_doubles_none(
    postgres: PostgresLocation,
) -> None:
    schema = f"crash_{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    answered = run_writers(postgres, schema, kill=True)
    assert len(answered) >= KILL_AFTER_ANSWERS
    fields = recorded(postgres, schema)
    # Every answered command is there, once; a few more may have committed unanswered.
    for command_id in answered:
        _, thread, n = command_id.split("-")
        assert fields[f"f_{thread}_{n}"] == 1, command_id
    assert max(fields.values()) == 1
    killed_at = len(fields)
    assert killed_at < THREADS * COMMANDS  # the kill came mid-stream

    again = run_writers(postgres, schema, kill=False)
    assert len(again) == THREADS * COMMANDS
    fields = recorded(postgres, schema)
    assert len(fields) == THREADS * COMMANDS
    assert set(fields.values()) == {1}
    with psycopg.connect(postgres.conninfo) as conn:
        batches = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.ledger_events").format(sql.Identifier(schema))
        ).fetchone()
    assert batches is not None
    assert batches[0] == THREADS * SUBJECTS_PER_THREAD + THREADS * COMMANDS
    assert time.monotonic() - started < 300
