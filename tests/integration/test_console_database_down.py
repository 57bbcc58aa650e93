"""The console on PostgreSQL, with its database cut off (connections refused, open ones
terminated, as in a restart or failover): its pages answer an HTML 503 that says the database
is unavailable, within the pool's wait; never a 500, never a hang."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, asgi_client
from support.console_seed import sign_in
from support.outage import cut_off, own_database

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.console.app import create_app
from factledger.api.settings import RateLimitSettings, Settings

pytestmark = [pytest.mark.integration, pytest.mark.serial]

ACQUIRE_TIMEOUT_S = 1.0
ANSWER_WITHIN_S = ACQUIRE_TIMEOUT_S + 4.0  # one wait for a connection, on a loaded machine


@pytest.fixture
def database(postgres: PostgresLocation) -> Iterator[PostgresLocation]:
    with own_database(postgres, "console") as database:
        yield database


def url_of(location: PostgresLocation) -> str:
    auth = f"{location.user}:{location.password}"
    return f"postgresql://{auth}@:{location.port}/{location.dbname}?host={location.host}"


@pytest.mark.parametrize("page_path", ["/console/queue", "/console/subjects"])
async def test_a_console_page_is_a_503_page_while_the_database_is_down(
    postgres: PostgresLocation, database: PostgresLocation, tmp_path: Path, page_path: str
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(url_of(database)),
        event_store={"kind": "postgres"},  # type: ignore[arg-type]
        views={"kind": "postgres"},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        postgres={"acquire_timeout_s": ACQUIRE_TIMEOUT_S, "reconnect_timeout_s": 1.0},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    needs = Needs(backend=False, run_sync=False)
    async with open_runtime(settings, needs) as runtime:
        app = create_app(ports=runtime, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
        async with asgi_client(app) as web:
            await sign_in(web)
            assert (await web.get(page_path)).status_code == 200

            cut_off(postgres, database)
            started = time.monotonic()
            page = await web.get(page_path)
            took = time.monotonic() - started

    assert page.status_code == 503, page.text[:200]
    assert page.headers["content-type"].startswith("text/html")
    assert "Database unavailable" in page.text
    assert page.headers["Retry-After"] == "5"
    assert took < ANSWER_WITHIN_S
