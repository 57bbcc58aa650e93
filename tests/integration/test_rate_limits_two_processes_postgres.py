"""Two `factledger serve` processes on one PostgreSQL hold one principal's configured rate in
total: the count is a row both update (`adapters.postgres.rate_store`)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from e2e.test_rate_limits_two_processes import LIMITS, assert_rate_held_in_total, two_processes

from factledger.adapters.postgres_server import PostgresLocation

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.serial]


def test_two_processes_on_one_postgres_hold_the_rate_in_total(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:10]
    url = (
        f"postgresql://{postgres.user}:{postgres.password}@/{postgres.dbname}?host={postgres.host}"
    )
    extra = {
        **LIMITS,
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "postgres",
        "FACTLEDGER_VIEWS__SCHEMA_NAME": f"views_{suffix}",
    }
    with two_processes(tmp_path, extra) as base_urls:
        assert_rate_held_in_total(base_urls, tmp_path)
