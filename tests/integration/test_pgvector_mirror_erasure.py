"""Forgetting reaches the mirrors (ADR 0015, 0056): once a fact whose words are a canary is
forgotten, no mirror of the process that forgot it holds the canary, and another process's
mirror lets go of it at its next search of the namespace."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.mirrors import TwoProcesses, mirrored_keywords, mirrored_rows, two_processes

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.mirror import cache, feed
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.types import Namespace, SearchQuery

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:erasure")
CANARY = "Zanzibar Periwinkle"  # distinctive words that no other text of the test contains
QUERY = SearchQuery("supplier", threshold=-1.0, limit=50)


def holds_canary(backend: PgvectorMemoryBackend) -> bool:
    """Whether any mirror of the process carries a canary word: in any value of any row
    (text, keywords, JSON), or as a key of its keyword index."""
    words = [w.lower() for w in CANARY.split()]
    rows = repr(mirrored_rows(backend)).lower()
    return any(w in rows for w in words) or bool(set(words) & mirrored_keywords(backend))


@pytest.fixture
async def two(postgres: PostgresLocation) -> AsyncIterator[TwoProcesses]:
    async with two_processes(postgres) as opened:
        await opened.remember(NS, "d0", "orders from the supplier every monday")
        yield opened


async def canary_fact(two: TwoProcesses) -> str:
    canary = await two.remember(NS, "d1", f"the supplier's owner is {CANARY}")
    await two.mirrored.search(NS, QUERY)
    assert holds_canary(two.mirrored)  # the probe finds it while it is held
    return canary


async def test_the_forgetting_process_drops_its_mirror_of_the_canary(two: TwoProcesses) -> None:
    canary = await canary_fact(two)

    await two.mirrored.forget(NS, [canary], reason="erasure")

    assert NS not in two.mirrored.searcher.mirrors.held()
    assert not holds_canary(two.mirrored)
    await two.mirrored.search(NS, QUERY)  # loaded again: the shredded row only
    assert NS in two.mirrored.searcher.mirrors.held()
    assert not holds_canary(two.mirrored)


async def test_another_process_lets_go_of_the_canary_at_its_next_search(
    two: TwoProcesses,
) -> None:
    canary = await canary_fact(two)

    await two.writer.forget(NS, [canary], reason="erasure")
    hits = await two.mirrored.search(NS, QUERY)

    assert canary not in [h.id for h in hits]
    assert not holds_canary(two.mirrored)
    # Asked about by name afterwards, the mirror keeps no entry for words no fact holds.
    assert await two.mirrored.search(NS, SearchQuery(CANARY, threshold=0.5)) == []
    assert not holds_canary(two.mirrored)


async def test_a_load_read_before_the_forget_is_not_kept_by_the_forgetting_process(
    postgres: PostgresLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background load whose snapshot predates the forget finishes after it: the forgetting
    process must not take that snapshot, canary and all, as its mirror."""
    async with two_processes(postgres, MirrorSettings(inline=False, earn_after=1)) as two:
        canary = await two.remember(NS, "d1", f"the supplier's owner is {CANARY}")
        read, release = asyncio.Event(), asyncio.Event()

        async def slow_load(*args: Any, **kwargs: Any) -> Any:
            loaded = await feed.load(*args, **kwargs)  # the snapshot holds the canary
            read.set()
            await release.wait()
            return loaded

        monkeypatch.setattr(cache, "load", slow_load)
        mirrors = two.mirrored.searcher.mirrors
        await two.mirrored.search(NS, QUERY)  # the database's path; the load starts
        [loading] = mirrors._loading.values()
        await asyncio.wait_for(read.wait(), timeout=10.0)

        await two.mirrored.forget(NS, [canary], reason="erasure")
        release.set()
        await asyncio.wait_for(loading, timeout=10.0)

        assert not holds_canary(two.mirrored)
