"""pgvector memories mode with the plan's `lexical_depth` (ADR 0048): on a namespace with an
ANN index a bounded search reads a deeper vector list, so its bound admits fewer holders past
it; the holders it still admits are fetched, and the answer is the one of the ranking's own
list (20 rows) with its holders; a namespace searched exactly is unchanged."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from support.first_axis import QueryAlongTheFirstAxis, at_cosine, first_axis_backend

from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.lexical import LEXICAL_WEIGHT
from factledger.application.memory.types import Namespace, SearchQuery
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.integration
NS, OTHER = Namespace("tenant-1:large"), Namespace("tenant-2:large")
START = datetime(2026, 1, 1, tzinfo=UTC)
QUERY = "lantern harbour"
# 20 facts without keywords fill the default vector list (one at 0.99, then 0.30 down to
# 0.264), so the bar is the third best: 0.30. Past them, by cosine: a fact holding both
# keywords that they lift into the top 3 (0.25 + LEXICAL_WEIGHT), 120 more facts without
# keywords, and past them a fact lifted to third place (0.23 + LEXICAL_WEIGHT); last, facts
# holding one keyword or both and staying under the bar.
FILLER = [(0.99, ()), *((0.30 - i * 0.002, ()) for i in range(19))]
LIFTED = (0.25, ("lantern", "harbour"))
DEEP = [(0.245 - i * 0.0001, ()) for i in range(120)]
LIFTED_FROM_DEEP = (0.23, ("lantern", "harbour"))
TAIL = [(-0.5, ("lantern", "harbour")), (-0.6, ("lantern",)), (-0.7, ("harbour",))]
FACTS: list[tuple[float, tuple[str, ...]]] = [*FILLER, LIFTED, *DEEP, LIFTED_FROM_DEEP, *TAIL]
DEEP_ID = f"ns-{21 + len(DEEP):03d}"
OWN_DEPTH = 1  # under the ranking's own depth (20 rows): the list is the ranking's


def bulk(ns: Namespace, prefix: str) -> list[BulkFact]:
    return [
        BulkFact(ns, f"{prefix}-{i:03d}", f"fact {i}", at_cosine(c, i + 1), terms=terms)
        for i, (c, terms) in enumerate(FACTS)
    ]


async def answers(
    postgres: PostgresLocation,
    monkeypatch: pytest.MonkeyPatch,
    *,
    indexed: bool,
    lexical_depth: int,
    other: bool = False,
) -> tuple[list[tuple[str, float]], int]:
    """The top 3 for `QUERY` in NS by a searcher planned with `lexical_depth`, and how many
    searches its bound admitted holders in."""
    # The layout's order holds for the served weight: a lift stays under the top fact.
    assert LIFTED[0] + LEXICAL_WEIGHT < FILLER[0][0]
    assert TAIL[0][0] + LEXICAL_WEIGHT < FILLER[1][0]
    async with first_axis_backend(postgres, START) as backend:
        await bulk_load_facts(backend.config, bulk(NS, "ns"))
        if other:  # another tenant's facts, nearer the query and holding both keywords
            await bulk_load_facts(
                backend.config,
                [
                    BulkFact(OTHER, f"other-{i:02d}", "x", at_cosine(0.9, i + 1), terms=LIFTED[1])
                    for i in range(30)
                ],
            )
        plan = replace(backend.searcher.plan, lexical_depth=lexical_depth)
        searcher = PgvectorSearcher(
            backend.db, embedder=QueryAlongTheFirstAxis(), clock=ManualClock(START), plan=plan
        )
        await _as_if_indexed(searcher, monkeypatch, indexed)
        hits = await searcher.search(NS, SearchQuery(QUERY, threshold=0.0, limit=3))
        return [(h.id, h.score) for h in hits], searcher.bounded.second_statements


async def _as_if_indexed(
    searcher: PgvectorSearcher, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    # Without a built index the vector list is exact either way; "indexed" writes the
    # namespace as a literal and takes the ANN path's choices, as for a partial index.
    async def has_ann(_: Namespace) -> bool:
        return indexed

    monkeypatch.setattr(searcher, "has_ann", has_ann)


async def test_an_indexed_namespace_answers_as_the_20_row_list_with_its_holders(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given / When
    exact, exact_holders = await answers(
        postgres, monkeypatch, indexed=True, lexical_depth=OWN_DEPTH
    )
    deep, deep_holders = await answers(postgres, monkeypatch, indexed=True, lexical_depth=100)

    # Then: the fact lifted from past the deeper list is fetched as a holder either way
    assert [i for i, _ in exact] == ["ns-000", "ns-020", DEEP_ID]
    assert [i for i, _ in deep] == [i for i, _ in exact]
    assert [s for _, s in deep] == pytest.approx([s for _, s in exact])
    assert (exact_holders, deep_holders) == (1, 1)


async def test_a_namespace_searched_exactly_keeps_the_holders_statement(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given / When
    exact, _ = await answers(postgres, monkeypatch, indexed=False, lexical_depth=OWN_DEPTH)
    with_setting, _ = await answers(postgres, monkeypatch, indexed=False, lexical_depth=100)

    # Then
    assert with_setting == exact
    assert [i for i, _ in exact] == ["ns-000", "ns-020", DEEP_ID]


async def test_the_deeper_list_holds_the_bound_namespace_only(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given: another tenant's facts, which would top the list if it saw them
    # When
    deep, _ = await answers(postgres, monkeypatch, indexed=True, lexical_depth=200, other=True)

    # Then
    assert [i for i, _ in deep] == ["ns-000", "ns-020", DEEP_ID]
