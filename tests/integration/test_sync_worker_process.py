"""`factledger worker` as separate processes on PostgreSQL: one is SIGKILLed mid-batch, the
next resumes, and the backend ends up as if nothing had happened."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.config import embedded_config
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.settings import load_settings
from factledger.application.memory.record_ids import namespace_for
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FACTLEDGER = Path(sys.executable).parent / "factledger"

CRASH_WORKER = Path(__file__).parents[1] / "support" / "sync_crash_worker.py"


def worker_env(location: PostgresLocation, data_dir: Path, suffix: str) -> dict[str, str]:
    url = (
        f"postgresql://{location.user}:{location.password}@/{location.dbname}?host={location.host}"
    )
    return {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "memory",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{suffix}",
        "FACTLEDGER_SYNC__BATCH_SIZE": "4",
        "FACTLEDGER_SYNC__LEASE_S": "0.5",
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        "FACTLEDGER_BACKEND__SCHEMA_NAME": f"mem_{suffix}",
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
    }


async def test_a_sigkilled_worker_process_resumes_without_loss_or_duplicates(
    postgres: PostgresLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suffix = uuid.uuid4().hex[:10]
    env = worker_env(postgres, tmp_path, suffix)
    for key, value in env.items():
        if key.startswith("FACTLEDGER_"):
            monkeypatch.setenv(key, value)
    clock = ManualClock()
    # The API side: the same settings, so the same event store and key store as the workers.
    with open_ledger_runtime(load_settings(), clock=clock) as runtime:
        story = run_story(runtime.ledger, clock, until="June")

    # A worker process dies (SIGKILL) right after its 3rd record write, mid-batch.
    crashed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(CRASH_WORKER), "3"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout.decode()[-2000:]
    store = await PostgresSyncStore.connect(postgres.conninfo, schema=f"sync_{suffix}")
    try:
        assert await store.pending_count() > 0
        # The next worker process takes over once the dead one's lease lapsed.
        await asyncio.sleep(0.6)  # past the dead worker's 0.5 s lease
        finished = await asyncio.to_thread(
            subprocess.run,
            [str(FACTLEDGER), "worker", "--once"],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert finished.returncode == 0, finished.stderr.decode()[-2000:]
        assert await store.pending_count() == 0
        assert await store.dead_letters() == []
    finally:
        await store.close()

    config = embedded_config(postgres, schema=f"mem_{suffix}")
    backend = await PgvectorMemoryBackend.open(
        config, embedder=HashingEmbedder(), extractor=RuleExtractor(), clock=clock
    )
    try:
        ns = namespace_for(story.subject_id)
        memories = await backend.list_memories(ns, include_superseded=True)
        supplier = sorted((m.text, m.is_latest) for m in memories if m.slot == "supplier")
        assert supplier == [("works with Supplier A", False), ("works with Supplier B", True)]
        texts = [m.text for m in memories]
        assert len(texts) == len(set(texts)), "a fact was extracted twice"
        for version in (1, 2, 3):
            assert (await backend.get_record(ns, f"profile.v{version}")).kind == "profile_version"
    finally:
        await backend.close()
