"""`factledger_sync_lag_events` reads 0 once everything is delivered on PostgreSQL: with the sync
inside the API process, and with the sync in a separate `factledger worker` process."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.serve_process import lag_settles_at_zero, record_a_session, serve_env, serving

from factledger.adapters.postgres_server import PostgresLocation

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FACTLEDGER = Path(sys.executable).parent / "factledger"


def postgres_env(location: PostgresLocation, *, worker_process: bool) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:10]
    url = (
        f"postgresql://{location.user}:{location.password}@/{location.dbname}?host={location.host}"
    )
    env = {
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "postgres",
        "FACTLEDGER_VIEWS__SCHEMA_NAME": f"views_{suffix}",
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
        "FACTLEDGER_PROPOSALS__MODE": "off",
    }
    if worker_process:  # the worker and the API share the queue and the backend
        env |= {
            "FACTLEDGER_SYNC__STORE__KIND": "postgres",
            "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{suffix}",
            "FACTLEDGER_BACKEND__KIND": "pgvector",
            "FACTLEDGER_BACKEND__SCHEMA_NAME": f"mem_{suffix}",
        }
    return env


@contextmanager
def worker(data_dir: Path, extra: dict[str, str]) -> Iterator[None]:
    log = data_dir / "worker.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            [str(FACTLEDGER), "worker"],
            env=serve_env(data_dir, extra),
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_sync_lag_returns_to_zero_with_the_sync_in_the_api_process(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    extra = postgres_env(postgres, worker_process=False)
    with serving(tmp_path, extra) as base_url:
        record_a_session(base_url)
        assert lag_settles_at_zero(base_url) == 0


def test_the_sync_lag_returns_to_zero_with_a_worker_process(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    extra = postgres_env(postgres, worker_process=True)
    with serving(tmp_path, extra) as base_url, worker(tmp_path, extra):
        record_a_session(base_url)
        assert lag_settles_at_zero(base_url) == 0
