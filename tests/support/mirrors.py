"""Two pgvector backends on one schema, as two processes of the service would be (ADR 0056's
tests): `mirrored` keeps process-local mirrors, `writer` does not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.types import Namespace, RelationKind
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import fresh_schema, pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

EMBEDDER = HashingEmbedder(64)
START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class TwoProcesses:
    mirrored: PgvectorMemoryBackend
    writer: PgvectorMemoryBackend
    extractor: ScriptedExtractor
    clock: ManualClock

    async def remember(self, ns: Namespace, doc: str, text: str, *, slot: str | None = None) -> str:
        """Ingests one fact through the writer; returns its memory id. A fact with a slot
        supersedes the slot's current fact."""
        relation = RelationKind.UPDATES if slot else None
        fact = ExtractedFact("f0", text, slot, (0,), relation=relation)
        transcript = self.extractor.script(f"{self.writer.config.schema} {ns} {doc}", fact)
        await self.writer.ingest_transcript(ns, doc, transcript, occurred_at=START)
        listed = await self.writer.list_memories(ns, include_superseded=True)
        return next(f.id for f in listed if f.document_id == doc)


@asynccontextmanager
async def two_processes(
    location: PostgresLocation, mirror: MirrorSettings | None = None
) -> AsyncIterator[TwoProcesses]:
    config = await fresh_schema(location)
    extractor, clock = ScriptedExtractor(), ManualClock(START)
    async with (
        pgvector_backend(
            location,
            embedder=EMBEDDER,
            extractor=extractor,
            clock=clock,
            config=config,
            mirror=mirror or MirrorSettings(inline=True, earn_after=1),
        ) as mirrored,
        pgvector_backend(
            location, embedder=EMBEDDER, extractor=extractor, clock=clock, config=config
        ) as writer,
    ):
        yield TwoProcesses(mirrored, writer, extractor, clock)


def mirror_of(backend: PgvectorMemoryBackend, ns: Namespace) -> MirroredNamespace:
    return backend.searcher.mirrors._mirrors[ns]


def mirrored_rows(backend: PgvectorMemoryBackend) -> list[dict[str, Any]]:
    """Every row every mirror of this process holds."""
    return [row for m in backend.searcher.mirrors._mirrors.values() for row in m._rows]


def mirrored_keywords(backend: PgvectorMemoryBackend) -> set[str]:
    """Every keyword every mirror of this process keeps an index entry for."""
    return {
        term
        for m in backend.searcher.mirrors._mirrors.values()
        for term in (*m._holders, *m._holder_arrays)
    }


def reads_mirror_only(backend: PgvectorMemoryBackend, monkeypatch: Any) -> None:
    """The probe that a search was served by the mirror: the database's search statements
    fail the test if any search reaches them."""

    async def database_search(*_: Any, **__: Any) -> Any:
        raise AssertionError("the search read the database, not the mirror")

    monkeypatch.setattr(backend.searcher, "_fused_search", database_search)
    monkeypatch.setattr(backend.searcher, "_listed_rows", database_search)


class DatabaseSearches:
    """Counts the searches that read the database's search statements."""

    def __init__(self, backend: PgvectorMemoryBackend, monkeypatch: Any) -> None:
        self.count = 0
        searcher = backend.searcher
        for name in ("_fused_search", "_listed_rows"):
            monkeypatch.setattr(searcher, name, self._counted(getattr(searcher, name)))

    def _counted(self, method: Any) -> Any:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await method(*args, **kwargs)

        return counted
