"""The capacity lab's fast loader (`--defer-indexes`): the facts table's secondary indexes are
dropped for a load and rebuilt after it exactly as they were, and the loaded facts are found
by the product's search through them."""

from __future__ import annotations

import psycopg
import pytest

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.clocks import SystemClock
from factledger.application.memory.types import SearchQuery
from factledger.bench.capacity.run import (
    DIMENSION,
    CapacityOptions,
    PlantedEmbedder,
    indexes_deferred,
    namespace_of,
    seed_subjects,
    stored_vector,
)
from factledger.testing.pgvector_support import pgvector_backend

pytestmark = pytest.mark.integration

DEFINITIONS = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1"


async def test_a_deferred_load_ends_with_the_same_indexes_and_searchable_facts(
    postgres: PostgresLocation,
) -> None:
    embedder = PlantedEmbedder(DIMENSION)
    async with pgvector_backend(
        postgres, embedder=embedder, extractor=RuleExtractor(), clock=SystemClock()
    ) as backend:
        config = backend.config
        async with await psycopg.AsyncConnection.connect(
            config.admin_conninfo, autocommit=True, options=f"-c search_path={config.schema}"
        ) as admin:
            before = await (await admin.execute(DEFINITIONS, [config.schema])).fetchall()
            options = CapacityOptions(steps=(600,), facts_per_subject=20, chunk=200)
            async with indexes_deferred(admin, config.schema, maintenance_mb=64):
                during = await (await admin.execute(DEFINITIONS, [config.schema])).fetchall()
                await seed_subjects(config, options, 0, 30)
            after = await (await admin.execute(DEFINITIONS, [config.schema])).fetchall()
            assert after == before
            # Only the constraints' indexes stayed for the load (the memories' key among them).
            assert (
                0
                < len([n for n, _ in during if "memories" in n])
                < len([n for n, _ in before if "memories" in n])
            )
            embedder.planted = {"planted": await stored_vector(admin, 17, 4)}
        hits = await backend.search(namespace_of(17), SearchQuery("planted"))
        assert hits
        assert hits[0].text.startswith("Subject 17 fact 4:")
