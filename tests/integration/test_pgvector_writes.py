"""pgvector backend: concurrent, repeated and failing writes leave a consistent namespace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

import psycopg
import pytest
import structlog
from psycopg import sql

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.ingest import MEMORY_ROWS_PER_INSERT
from factledger.adapters.pgvector.records import CHUNK_ROWS_PER_INSERT, record_chunks
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.errors import InvalidMemoryInputError, MemoryNotFoundError
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.types import (
    Condition,
    FilterOp,
    IngestMode,
    Namespace,
    ProcessingState,
    RelationKind,
    SearchMode,
    SearchQuery,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import fresh_schema, pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor, extending, stated

pytestmark = pytest.mark.integration
NS = Namespace("subject-writes")


class YieldingExtractor(ScriptedExtractor):
    """Gives the event loop a turn before answering, so concurrent ingests really interleave."""

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        await asyncio.sleep(0.001)
        return await super().extract(request)


@pytest.fixture
def extractor() -> YieldingExtractor:
    return YieldingExtractor()


@pytest.fixture
async def backend(
    postgres: PostgresLocation, extractor: YieldingExtractor
) -> AsyncIterator[PgvectorMemoryBackend]:
    config = await fresh_schema(postgres, pool_max=6)
    async with pgvector_backend(
        postgres,
        embedder=HashingEmbedder(64),
        extractor=extractor,
        clock=ManualClock(),
        config=config,
    ) as backend:
        yield backend


async def ingest(
    backend: PgvectorMemoryBackend,
    extractor: ScriptedExtractor,
    document_id: str,
    text: str,
    facts: Sequence[ExtractedFact],
) -> ProcessingState:
    transcript = extractor.script(text, *facts)
    status = await backend.ingest_transcript(
        NS, document_id, transcript, occurred_at=ManualClock().now()
    )
    return status.state


# Many writers on one pool with a bounded wait for a connection: beside another worker's load
# the wait ran out once (ADR 0100).
@pytest.mark.serial
async def test_concurrent_updates_of_one_slot_leave_one_current_fact_and_one_chain(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    runs = [
        ingest(
            backend,
            extractor,
            f"call-{n}",
            f"We now use supplier {n}",
            [stated("f0", f"Supplier is {n}", slot="supplier", updates=True)],
        )
        for n in range(12)
    ]

    states = await asyncio.gather(*runs)
    facts = await backend.list_memories(NS)

    assert states == [ProcessingState.DONE] * 12
    assert len(facts) == 12
    assert sum(f.is_latest for f in facts) == 1
    assert sorted(f.version for f in facts) == list(range(1, 13))
    # Every fact but the first supersedes exactly the one before it in the chain.
    superseded = [r.memory_id for f in facts for r in f.relations if r.kind is RelationKind.UPDATES]
    assert len(superseded) == 11
    assert len(set(superseded)) == 11


async def test_one_document_chains_its_own_slot_facts_and_writes_a_repeated_key_once(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    # Given a current fact in the slot
    await ingest(backend, extractor, "call-1", "Supplier A", [stated("f0", "A", slot="s")])
    # When one document holds two updates of that slot and repeats a key
    facts = [
        stated("f0", "B", slot="s", updates=True),
        stated("f1", "C", slot="s", updates=True),
        stated("f0", "B", slot="s", updates=True),
        stated("f2", "an unslotted fact"),
    ]
    first = await ingest(backend, extractor, "call-2", "Supplier B, then C", facts)
    replay = await backend.ingest_transcript(
        NS,
        "call-2",
        extractor.script("Supplier B, then C", *facts),
        occurred_at=ManualClock().now(),
    )

    # Then each fact of the slot supersedes the one before it, and nothing is doubled
    stored = {f.text: f for f in await backend.list_memories(NS)}
    assert (first, replay.state, replay.facts) == (ProcessingState.DONE, ProcessingState.DONE, 3)
    assert sorted(stored) == ["A", "B", "C", "an unslotted fact"]
    assert [stored[t].version for t in ("A", "B", "C")] == [1, 2, 3]
    assert [t for t in ("A", "B", "C") if stored[t].is_latest] == ["C"]
    assert [r.memory_id for r in stored["C"].relations] == [stored["B"].id]
    assert [r.memory_id for r in stored["B"].relations] == [stored["A"].id]
    assert (stored["an unslotted fact"].version, stored["an unslotted fact"].relations) == (1, ())


async def test_facts_sent_together_are_linked_as_if_written_one_by_one(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    # Given one document whose facts go in multi-row INSERTs (ADR 0094): a fact extending one
    # still unsent, more slotted facts than one INSERT carries, then an update of one of them
    many = MEMORY_ROWS_PER_INSERT + 4
    facts = [
        stated("base", "Runs a bakery"),
        extending("more", "Runs it with a sister", "base"),
        *(stated(f"s{n}", f"value {n}", slot=f"slot-{n}") for n in range(many)),
        stated("again", "value 3, changed", slot="slot-3", updates=True),
    ]

    state = await ingest(backend, extractor, "call-1", "A bakery", facts)

    # Then every link reads the facts before it, as one INSERT per fact did
    stored = {f.text: f for f in await backend.list_memories(NS)}
    assert state is ProcessingState.DONE
    assert len(stored) == many + 3
    assert [r.memory_id for r in stored["Runs it with a sister"].relations] == [
        stored["Runs a bakery"].id
    ]
    changed, before = stored["value 3, changed"], stored["value 3"]
    assert [r.memory_id for r in changed.relations] == [before.id]
    assert (changed.version, changed.is_latest, before.is_latest) == (2, True, False)
    assert all(stored[f"value {n}"].is_latest for n in range(many) if n != 3)


async def test_one_document_ingested_concurrently_is_written_once(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    facts = [stated("f0", "Has two dogs", slot="pets"), stated("f1", "Lives in Leeds")]
    runs = [ingest(backend, extractor, "call-1", "Two dogs, Leeds", facts) for _ in range(6)]

    states = await asyncio.gather(*runs)

    assert set(states) == {ProcessingState.DONE}
    assert sorted(m.text for m in await backend.list_memories(NS)) == [
        "Has two dogs",
        "Lives in Leeds",
    ]
    assert (await backend.processing_status(NS, "call-1")).facts == 2


async def test_one_record_written_concurrently_is_stored_once(
    backend: PgvectorMemoryBackend,
) -> None:
    body = '{"summary": "renewal discussed"}'

    await asyncio.gather(*(backend.put_record(NS, "s-1", "summary", body) for _ in range(6)))
    hits = await backend.search(
        NS, SearchQuery("renewal", mode=SearchMode.CHUNKS, threshold=0.0, limit=10)
    )

    assert [h.document_id for h in hits] == ["s-1"]


async def test_a_record_of_more_chunks_than_one_insert_takes_stores_each_once_in_order(
    backend: PgvectorMemoryBackend,
) -> None:
    # Given a body that splits into more chunks than one INSERT carries (32 rows)
    words = " ".join(f"word{n:04d}" for n in range(4_000))  # 36,000 characters: 37 chunks
    body = json.dumps({"notes": words})
    expected = record_chunks(body)
    assert len(expected) > CHUNK_ROWS_PER_INSERT

    await backend.put_record(NS, "long-1", "summary", body)
    await backend.put_record(NS, "long-1", "summary", body)  # a replay writes nothing more

    stored = await _chunk_rows(backend)
    assert stored == [(f"long-1#{i}", i, text) for i, text in enumerate(expected)]


async def _chunk_rows(backend: PgvectorMemoryBackend) -> list[tuple[str, int, str]]:
    config = backend.config
    async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
        cur = await conn.execute(
            sql.SQL("SELECT chunk_id, chunk_index, text FROM {} ORDER BY chunk_index").format(
                sql.Identifier(config.schema, "chunks")
            )
        )
        return [(r[0], r[1], r[2]) for r in await cur.fetchall()]


async def test_a_write_failing_midway_leaves_nothing_behind(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    await ingest(backend, extractor, "call-1", "Supplier A", [stated("f0", "A", slot="s")])
    # NUL cannot be stored in a text column: the second fact fails after the first was written
    # and after the slot's current fact was superseded, inside the same transaction.
    poisoned = [stated("f0", "B", slot="s", updates=True), stated("f1", "bad\x00text")]

    with pytest.raises(InvalidMemoryInputError):
        await ingest(backend, extractor, "call-2", "Supplier B", poisoned)

    (only,) = await backend.list_memories(NS)
    assert (only.text, only.is_latest) == ("A", True)
    with pytest.raises(MemoryNotFoundError):
        await backend.processing_status(NS, "call-2")


async def test_statements_sent_in_one_trip_are_one_transaction_bound_to_the_namespace(
    backend: PgvectorMemoryBackend,
) -> None:
    # ADR 0103: the binding and the parts go in one pipeline, committed by its only Sync.
    write = (
        "INSERT INTO records (namespace, record_id, kind, body_json, body) VALUES "
        "(current_setting('app.namespace'), 'r-1', 'note', '{}', '{}')"
    )
    with pytest.raises(psycopg.errors.DivisionByZero):
        await backend.db.in_one_trip(NS, [(write, []), ("SELECT 1 / 0", [])])
    with pytest.raises(MemoryNotFoundError):
        await backend.get_record(NS, "r-1")  # the failing part took the first one back

    rows = await backend.db.in_one_trip(
        NS, [(write, []), ("SELECT current_setting('app.namespace')", [])]
    )

    assert rows == [[], [(NS,)]]
    assert (await backend.get_record(NS, "r-1")).kind == "note"
    other = await backend.db.in_one_trip(
        Namespace("subject-other"), [("SELECT count(*) FROM records", [])]
    )
    assert other == [[(0,)]]  # row-level security: another namespace sees none of it


async def test_batched_documents_are_queued_in_the_database_and_worked_off(
    postgres: PostgresLocation, extractor: YieldingExtractor
) -> None:
    # No background task: the test drives the worker, so every state is observable.
    config = replace(await fresh_schema(postgres), start_worker=False)
    async with pgvector_backend(
        postgres,
        embedder=HashingEmbedder(64),
        extractor=extractor,
        clock=ManualClock(),
        config=config,
    ) as backend:
        for n in range(3):
            transcript = extractor.script(f"order {n}", stated("f0", f"Order {n} placed"))
            await backend.ingest_transcript(
                NS, f"b-{n}", transcript, occurred_at=ManualClock().now(), mode=IngestMode.BATCHED
            )
        queued = [(await backend.processing_status(NS, f"b-{n}")).state for n in range(3)]
        processed = await backend.worker.run_pending()
        done = [(await backend.processing_status(NS, f"b-{n}")) for n in range(3)]

    assert queued == [ProcessingState.QUEUED] * 3
    assert processed == 3
    assert [(s.state, s.facts) for s in done] == [(ProcessingState.DONE, 1)] * 3


async def test_filter_values_travel_as_parameters(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    transcript = extractor.script("note", stated("f0", "Prefers email"))
    await backend.ingest_transcript(
        NS, "d-1", transcript, occurred_at=ManualClock().now(), metadata={"channel": "chat"}
    )
    hostile = "chat' OR TRUE --"

    hits = await backend.search(
        NS,
        SearchQuery("email", threshold=0.0, filters=Condition("channel", FilterOp.EQ, hostile)),
    )

    assert hits == []


async def test_logs_name_ids_and_counts_never_content(
    backend: PgvectorMemoryBackend, extractor: YieldingExtractor
) -> None:
    secret = "my sister's diagnosis"
    with structlog.testing.capture_logs() as logs:
        await ingest(backend, extractor, "call-1", secret, [stated("f0", secret)])
        await backend.search(NS, SearchQuery(secret, threshold=0.0))
        (memory,) = await backend.list_memories(NS)
        await backend.forget(NS, [memory.id], reason=secret)
        await backend.put_record(NS, "r-1", "note", f'{{"t": "{secret}"}}')

    assert logs
    assert secret not in repr(logs)


async def test_a_document_left_mid_indexing_by_a_dead_worker_is_taken_over(
    postgres: PostgresLocation, extractor: YieldingExtractor
) -> None:
    config = replace(await fresh_schema(postgres), start_worker=False)
    async with pgvector_backend(
        postgres,
        embedder=HashingEmbedder(64),
        extractor=extractor,
        clock=ManualClock(),
        config=config,
    ) as backend:
        transcript = extractor.script("order 9", stated("f0", "Order 9 placed"))
        await backend.ingest_transcript(
            NS, "b-9", transcript, occurred_at=ManualClock().now(), mode=IngestMode.BATCHED
        )
        # As if a worker had claimed it and died while indexing, an hour ago.
        async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
            await conn.execute(
                sql.SQL(
                    "UPDATE {} SET state = 'indexing', claimed_at = now() - interval '1 hour'"
                ).format(sql.Identifier(config.schema, "documents"))
            )
            await conn.commit()

        processed = await backend.worker.run_pending()
        status = await backend.processing_status(NS, "b-9")

    assert processed == 1
    assert (status.state, status.facts) == (ProcessingState.DONE, 1)
