"""`factledger-lab pgvector mirror-costs` (ADR 0225): each size's loads and searches timed on a
server of its own, the mirror's search answering what the database's does."""

from __future__ import annotations

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.bench.pgvector.contact_centre import ContactCentreOptions
from factledger.bench.pgvector.mirror_costs import SizeCosts, measure_size

pytestmark = pytest.mark.integration


async def test_a_size_is_measured_over_every_namespace_but_the_warm_up() -> None:
    costs = await measure_size(
        30, 3, 2, HashingEmbedder(64), ContactCentreOptions(pool=200, vectors_cache=None)
    )

    assert (costs.facts, costs.namespaces) == (30, 2)
    assert costs.load_wall_ms > 0
    assert costs.load_cpu_ms >= 0
    assert 0 < costs.database_ms[0] <= costs.database_ms[1]
    assert 0 < costs.mirror_ms[0] <= costs.mirror_ms[1]
    assert costs.row().startswith("| 30 | 2 | ")
    assert costs.row().endswith(" | 2 |")  # 30 facts earn their mirror at the second search


def test_a_mirror_that_saves_nothing_never_pays_for_its_load() -> None:
    slower = SizeCosts(100, 4, 3.0, 2.0, (1.0, 1.5), (1.2, 1.6))
    paying = SizeCosts(100, 4, 3.0, 2.0, (1.0, 1.5), (0.5, 0.7))

    assert slower.searches_to_pay == float("inf")
    assert paying.searches_to_pay == pytest.approx(6.0)
