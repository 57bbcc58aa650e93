"""The schema fuzzing of tests/e2e/test_api_fuzz.py against `factledger serve` on PostgreSQL +
pgvector (ledger, views, sync queue and memory backend in the database): whatever schemathesis
sends, nothing answers 5xx and every answer keeps the schema; afterwards an analyst reads the
fuzzed subject's whole history in pages of 500 (that read once answered 500 on PostgreSQL only).

Bounded by `FACTLEDGER_FUZZ_EXAMPLES`, as the in-process run is.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from support.api_fuzz import CALLERS, Scene, check_case, read_every_event_page, set_the_scene
from support.api_harness import TEST_AUTH, build_ports
from support.serve_process import postgres_serve_env, serving

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.http.app import create_app
from factledger.testing.manual_clock import ManualClock

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLES_PER_OPERATION = int(os.environ.get("FACTLEDGER_FUZZ_EXAMPLES", "5"))
# The served app's schema is the in-process app's (one factory, one document).
schema = schemathesis.openapi.from_dict(
    create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH).openapi()
).exclude(path="/v1/events/stream")
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@pytest.fixture(scope="module")
def live_postgres(
    postgres: PostgresLocation, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scene]:
    folder: Path = tmp_path_factory.mktemp("fuzz-postgres")
    with serving(folder, postgres_serve_env(postgres)) as url:
        yield set_the_scene(url)


@pytest.mark.parametrize("caller", sorted(CALLERS))
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_the_api_on_postgres_fail_or_break_its_schema(
    case: Any, caller: str, live_postgres: Scene
) -> None:
    check_case(case, caller, live_postgres)


def test_the_analyst_reads_the_fuzzed_subjects_history_in_pages_of_500(
    live_postgres: Scene,
) -> None:
    assert read_every_event_page(live_postgres.url, live_postgres.subject_id) >= 1
