"""The pgvector backend's settings size this process's mirrors, and 0 MB turns them off
(ADR 0056): what an operator sets is what the searches do."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from e2e.test_api_shared_postgres import url_of
from pydantic import SecretStr

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_memory_backend
from factledger.api.settings import Settings
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.types import Namespace, SearchQuery

pytestmark = pytest.mark.integration


def pgvector_settings(postgres: PostgresLocation, data_dir: Path, **mirror: int | None) -> Settings:
    suffix = uuid.uuid4().hex[:8]
    return Settings(
        data_dir=data_dir,
        database_url=SecretStr(url_of(postgres)),
        backend={  # type: ignore[arg-type]
            "kind": "pgvector",
            "schema_name": f"mirror_settings_{suffix}",
            "app_role": f"mirror_settings_{suffix}",
            **mirror,
        },
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
    )


async def test_the_settings_size_the_mirrors(postgres: PostgresLocation, tmp_path: Path) -> None:
    settings = pgvector_settings(
        postgres, tmp_path, mirror_budget_mb=64, mirror_max_facts=5_000, mirror_earn_after=1
    )

    async with open_memory_backend(settings) as opened:
        backend = innermost_backend(opened)
        assert isinstance(backend, PgvectorMemoryBackend)
        mirrors = backend.searcher.mirrors
        assert mirrors.enabled
        assert (mirrors.settings.budget_mb, mirrors.settings.max_facts) == (64, 5_000)
        assert mirrors.settings.earn_after == 1
        assert (mirrors.settings.facts_per_search, mirrors.settings.earn_at_most) == (20, 64)
        # In the background, as in production; earned at the first search here.
        await opened.search(Namespace("subject-1"), SearchQuery("supplier", threshold=0.0))
        for _ in range(600):  # a bound for a hang only
            if mirrors.loads:
                break
            await asyncio.sleep(0.05)
        assert mirrors.held() == {"subject-1": 0}


async def test_a_budget_of_zero_reads_the_database_on_every_search(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    settings = pgvector_settings(postgres, tmp_path, mirror_budget_mb=0)

    async with open_memory_backend(settings) as opened:
        backend = innermost_backend(opened)
        assert isinstance(backend, PgvectorMemoryBackend)
        for _ in range(3):
            await opened.search(Namespace("subject-1"), SearchQuery("supplier", threshold=0.0))
        await asyncio.sleep(0.1)
        assert not backend.searcher.mirrors.enabled
        assert backend.searcher.mirrors.held() == {}
        assert backend.searcher.mirrors.loads == 0


async def test_the_settings_say_how_many_searches_a_large_namespace_earns_its_mirror_by(
    postgres: PostgresLocation, tmp_path: Path
) -> None:
    settings = pgvector_settings(
        postgres, tmp_path, mirror_facts_per_search=None, mirror_earn_after=3, mirror_earn_at_most=9
    )

    async with open_memory_backend(settings) as opened:
        backend = innermost_backend(opened)
        assert isinstance(backend, PgvectorMemoryBackend)
        mirrors = backend.searcher.mirrors.settings
        assert (mirrors.earn_after, mirrors.facts_per_search, mirrors.earn_at_most) == (3, None, 9)
