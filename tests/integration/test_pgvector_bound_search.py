"""pgvector backend: a search is one statement through `bound_search`, which binds only the
namespace it is given, only for that statement."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql
from psycopg.pq import Trace

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bound_search import run_bound
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import fresh_schema, pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

pytestmark = pytest.mark.integration
A = Namespace("tenant-1:subject-a")
B = Namespace("tenant-1:subject-b")
EMBEDDER = HashingEmbedder(64)
EVERY_MEMORY = sql.SQL(
    "SELECT 0, id, text, is_latest, is_inference, is_forgotten, occurred_at, document_id, "
    "relations, metadata, source_indexes, 0::double precision, NULL::real, lexical_terms "
    "FROM memories"
)


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    # One connection, so every call below runs on the connection the previous one used.
    config = await fresh_schema(postgres, pool_max=1)
    extractor = ScriptedExtractor()
    clock = ManualClock()
    async with pgvector_backend(
        postgres, embedder=EMBEDDER, extractor=extractor, clock=clock, config=config
    ) as backend:
        for ns, word in ((A, "alpha"), (B, "beta")):
            transcript = extractor.script(f"{word} said", stated("f0", f"Likes {word}"))
            await backend.ingest_transcript(ns, "doc-1", transcript, occurred_at=clock.now())
        yield backend


async def _bound(
    backend: PgvectorMemoryBackend, ns: Namespace, statement: sql.Composable, args: list[Any]
) -> list[str]:
    rows = await backend.db.one_statement(
        lambda conn: run_bound(conn, ns, statement, args, ef_search=None)
    )
    return [row["text"] for row in rows]


async def test_the_function_returns_only_the_given_namespace_rows(
    backend: PgvectorMemoryBackend,
) -> None:
    asked_for_a = sql.SQL("{} WHERE namespace = %s").format(EVERY_MEMORY)

    assert await _bound(backend, A, EVERY_MEMORY, []) == ["Likes alpha"]
    assert await _bound(backend, B, EVERY_MEMORY, []) == ["Likes beta"]
    # A statement asking for A's rows, bound to B, finds none: RLS applies inside the function.
    assert await _bound(backend, B, asked_for_a, [A]) == []


async def test_a_namespace_set_earlier_on_the_connection_does_not_leak_into_the_call(
    backend: PgvectorMemoryBackend,
) -> None:
    async def call_after_binding_a(conn: psycopg.AsyncConnection[Any]) -> list[str]:
        # Session-wide, as a careless caller might: the function's own binding must win.
        await conn.execute("SELECT set_config('app.namespace', %s, false)", [A])
        try:
            rows = await run_bound(conn, B, EVERY_MEMORY, [], ef_search=None)
            cur = await conn.execute("SELECT current_setting('app.namespace', true)")
            after = await cur.fetchone()
        finally:
            await conn.execute("RESET app.namespace")
        assert after == (A,)  # the call's transaction-local binding ended with the call
        return [row["text"] for row in rows]

    assert await backend.db.one_statement(call_after_binding_a) == ["Likes beta"]


async def test_a_connection_back_from_a_search_is_bound_to_no_namespace(
    backend: PgvectorMemoryBackend,
) -> None:
    hits = await backend.search(A, SearchQuery(text="Likes alpha", limit=5))

    async def state(conn: psycopg.AsyncConnection[Any]) -> tuple[Any, ...]:
        cur = await conn.execute(
            "SELECT current_setting('app.namespace', true), "
            "current_setting('hnsw.ef_search', true), (SELECT count(*) FROM memories)"
        )
        row = await cur.fetchone()
        assert row is not None
        return tuple(row)

    assert [h.text for h in hits] == ["Likes alpha"]
    namespace, ef_search, visible = await backend.db.one_statement(state)
    assert namespace in ("", None)
    assert ef_search in ("40", None)  # pgvector's default, not the ANN path's setting
    assert visible == 0


@pytest.mark.parametrize("mode", [SearchMode.MEMORIES, SearchMode.HYBRID, SearchMode.CHUNKS])
async def test_a_search_is_one_round_trip(
    backend: PgvectorMemoryBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: SearchMode,
) -> None:
    async def no_ann(_: Namespace) -> bool:
        return False  # the process-wide ANN lookup is cached; count the search alone

    monkeypatch.setattr(backend.searcher, "has_ann", no_ann)
    query = SearchQuery(text="Likes alpha", limit=5, mode=mode)
    trace = tmp_path / "trace.txt"
    with trace.open("w") as out:

        async def start(conn: psycopg.AsyncConnection[Any]) -> None:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)

        async def stop(conn: psycopg.AsyncConnection[Any]) -> None:
            conn.pgconn.untrace()

        await backend.db.one_statement(start)
        hits = await backend.search(A, query)
        await backend.db.one_statement(stop)

    sent = [line.split()[2] for line in trace.read_text().splitlines() if line.startswith("F")]
    if mode is not SearchMode.CHUNKS:  # the facts are memories; a chunk is a stored record
        assert [h.text for h in hits][:1] == ["Likes alpha"]
    # Each round trip ends in a Sync (extended protocol) or is one Query (simple protocol).
    assert sum(kind in ("Sync", "Query") for kind in sent) == 1
    assert "Query" not in sent  # no BEGIN or COMMIT


async def test_vector_and_typed_arguments_reach_the_statement(
    backend: PgvectorMemoryBackend,
) -> None:
    vector = np.ones(EMBEDDER.dimension, dtype=np.float32)
    statement = sql.SQL(
        "{} WHERE 1 - (embedding <=> %b) > %s AND %s + 1 = 3 AND %s AND text LIKE 'Likes %%'"
    ).format(EVERY_MEMORY)

    texts = await _bound(backend, A, statement, [vector, -2.5, 2, True])

    assert texts == ["Likes alpha"]
