"""What the API's unit tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.api_harness import TEST_AUTH

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.settings import Settings


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    """The API's runtime on the embedded default (SQLite ledger and views, short-term memory,
    the in-process sync queue, the in-memory backend) with the hashing embedder, opened in
    `tmp_path`."""
    settings = Settings(
        data_dir=tmp_path,
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    async with open_runtime(settings) as opened:
        yield opened
