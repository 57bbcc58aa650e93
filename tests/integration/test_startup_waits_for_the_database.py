"""A process that starts while its database is away (restarting) keeps trying for
`api.startup_wait_s` instead of failing its startup at the first refusal: under
`serve --workers N`, one worker whose startup fails makes uvicorn stop every worker, so a
replacement worker starting during a database restart would otherwise take the service down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs
from support.api_harness import TEST_AUTH
from support.crash import CrashablePostgres

from factledger.api.bootstrap.compose import open_runtime_patiently
from factledger.api.bootstrap.runtime import API
from factledger.api.settings import Settings
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.commands import RegisterSubject

pytestmark = pytest.mark.integration

BACK_AFTER_S = 2.0


def settings_for(server: CrashablePostgres, data_dir: Path, wait_s: float) -> Settings:
    return Settings(
        data_dir=data_dir,
        database_url=SecretStr(server.url()),
        event_store={"kind": "postgres", "schema_name": "events"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": "views"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": "short_term"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        postgres={"connect_timeout_s": 2, "acquire_timeout_s": 1, "reconnect_timeout_s": 1},  # type: ignore[arg-type]
        api={"startup_wait_s": wait_s},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )


async def test_a_process_started_during_a_database_restart_opens_once_it_is_back(
    crashable: CrashablePostgres, tmp_path: Path
) -> None:
    settings = settings_for(crashable, tmp_path, wait_s=60)
    async with open_runtime_patiently(settings, API):
        pass  # the tables exist; the next start is a restart's
    crashable.kill()
    restarting = asyncio.create_task(
        asyncio.to_thread(lambda: (asyncio.run(asyncio.sleep(BACK_AFTER_S)), crashable.restart()))
    )
    with capture_logs() as logs:
        async with open_runtime_patiently(settings, API) as runtime:
            registered = runtime.ledger.register_subject(
                RegisterSubject(tenant="acme", kind="lead", external_ref="after-restart")
            )
            assert registered.applied
    await restarting
    refused = [e for e in logs if e["event"] == "runtime.store_unavailable_at_start"]
    assert refused, "the first attempts found the server away"
    assert all(e["error_type"].endswith("UnavailableError") for e in refused)


async def test_a_database_that_stays_away_fails_the_startup_after_the_wait(
    crashable: CrashablePostgres, tmp_path: Path
) -> None:
    crashable.kill()
    with pytest.raises(StoreUnavailableError):
        async with open_runtime_patiently(settings_for(crashable, tmp_path, wait_s=1.0), API):
            pass
