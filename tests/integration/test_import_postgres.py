"""The history import on PostgreSQL: ledger, keys, positions and the sync queue in the
database. An import process SIGKILLed mid-way resumes from its position, the sync ships the
sessions and the proposals step reviews them, and importing again adds no event."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.cli.importing import content_id, run_import
from factledger.api.settings import load_settings
from factledger.application.importing.importer import ImportOptions
from factledger.testing.history import HistoryShape, history_bytes

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CRASH_IMPORT = Path(__file__).parents[1] / "support" / "import_crash_worker.py"
SHAPE = HistoryShape(subjects=40, sessions_per_subject=8, messages_per_session=2)


def env_for(location: PostgresLocation, data_dir: Path, suffix: str) -> dict[str, str]:
    url = (
        f"postgresql://{location.user}:{location.password}@/{location.dbname}?host={location.host}"
    )
    return {
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "memory",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{suffix}",
        "FACTLEDGER_BACKEND__KIND": "in_memory",
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
    }


def events(location: PostgresLocation, schema: str) -> int:
    with psycopg.connect(location.conninfo) as conn:
        query = sql.SQL("SELECT count(*) FROM {}.ledger_events").format(sql.Identifier(schema))
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


async def test_a_killed_import_resumes_and_is_reviewed_on_postgres(
    postgres: PostgresLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suffix = uuid.uuid4().hex[:10]
    env = env_for(postgres, tmp_path, suffix)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    history = tmp_path / "history.ndjson"
    history.write_bytes(history_bytes(SHAPE))
    sessions = SHAPE.subjects * SHAPE.sessions_per_subject

    kill_after = str(sessions * 3 // 4)  # past the first batch (200 lines)
    killed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(CRASH_IMPORT), str(history), "acme", kill_after],
        env={**os.environ, **env},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]

    options = ImportOptions("acme", content_id(history, None))
    settings = load_settings()
    report = await run_import(settings, options, (history, None), wait_sync_s=120.0)
    assert report.finished
    assert report.resumed_after > 0
    assert report.sessions + report.unchanged == sessions
    assert report.proposals is not None
    assert report.proposals > 0  # the model read the resumed sessions
    before = events(postgres, f"ledger_{suffix}")

    again = await run_import(settings, options, (history, None), wait_sync_s=None)
    assert again.resumed_after == again.lines
    assert events(postgres, f"ledger_{suffix}") == before
