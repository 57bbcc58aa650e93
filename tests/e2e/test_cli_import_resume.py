"""`factledger import` of a generated 10,000-message history on the embedded default: the
import process is SIGKILLed halfway (right after a session was recorded, before its position
was saved), `factledger import` resumes it, and importing the file again changes nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.settings import load_settings
from factledger.domain.events import SessionRecorded, SubjectRegistered
from factledger.testing.history import HistoryShape, history_bytes

pytestmark = pytest.mark.slow

FACTLEDGER = Path(sys.executable).parent / "factledger"
CRASH_IMPORT = Path(__file__).parents[1] / "support" / "import_crash_worker.py"
SHAPE = HistoryShape(subjects=50, sessions_per_subject=20, messages_per_session=10)
SESSIONS = SHAPE.subjects * SHAPE.sessions_per_subject


def ledger_counts(data_dir: Path) -> tuple[int, int, int]:
    """(events, registered subjects, recorded sessions) of the SQLite ledger in `data_dir`."""
    settings = load_settings(data_dir=data_dir)
    with open_ledger_runtime(settings, catch_up=False) as runtime:
        recorder = runtime.ledger.recorder
        events = int(recorder.max_notification_id() or 0)
        subjects, sessions = (
            len(recorder.select_notifications(start=0, limit=10 * SESSIONS, topics=[topic]))
            for topic in (SubjectRegistered.TOPIC, SessionRecorded.TOPIC)
        )
    return events, subjects, sessions


async def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return await asyncio.to_thread(
        subprocess.run, list(args), env=env, capture_output=True, timeout=600, check=False
    )


async def test_an_import_killed_halfway_resumes_and_a_reimport_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SHAPE.messages == 10_000
    history = tmp_path / "history.ndjson"
    history.write_bytes(history_bytes(SHAPE))
    data_dir = tmp_path / "data"
    env = {**os.environ, "FACTLEDGER_DATA_DIR": str(data_dir), "FACTLEDGER_LOG_JSON": "true"}
    monkeypatch.setenv("FACTLEDGER_DATA_DIR", str(data_dir))
    importing = [str(FACTLEDGER), "import", str(history), "--tenant", "acme", "--no-wait-sync"]

    # Given an import killed (SIGKILL) right after its 500th session was recorded
    killed = await run(sys.executable, str(CRASH_IMPORT), str(history), "acme", "500", env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    # Subjects are recorded side by side (8 at once), each subject's run of sessions in a
    # batch in one save (ADR 0027): up to 8 such runs more may land before the signal.
    assert (
        SESSIONS // 2 <= ledger_counts(data_dir)[2] < SESSIONS // 2 + 8 * SHAPE.sessions_per_subject
    )

    # When `factledger import` runs again, it resumes after the saved position
    resumed = await run(*importing, "--json", env=env)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    report = json.loads(resumed.stdout)
    assert report["finished"]
    assert 0 < report["resumed_after"] < report["lines"] == SHAPE.subjects * 21
    # What the killed run did after its last saved position is found done: its sessions
    # count as unchanged, its subjects (registered already) are not counted again.
    assert report["sessions"] + report["unchanged"] == SESSIONS
    assert 0 < report["subjects"] <= SHAPE.subjects
    assert report["messages"] + report["withheld"] <= SHAPE.messages
    assert report["error_count"] == 0
    events, subjects, sessions = ledger_counts(data_dir)
    assert (subjects, sessions) == (SHAPE.subjects, SESSIONS)

    # Then importing the same file again, or under another id, adds nothing
    again = await run(*importing, env=env)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert "nothing new was recorded" in again.stdout.decode()
    other = await run(*importing, "--import-id", "second-run", "--json", env=env)
    assert other.returncode == 0, other.stderr.decode()[-2000:]
    rechecked = json.loads(other.stdout)
    assert (rechecked["sessions"], rechecked["unchanged"]) == (0, SESSIONS)
    assert ledger_counts(data_dir) == (events, SHAPE.subjects, SESSIONS)
