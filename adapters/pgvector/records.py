"""Verbatim records of the pgvector backend: stored as JSONB and as the exact text, searchable as
chunks, immutable under our ids."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg

from factledger.adapters.pgvector.filters import metadata_from_json
from factledger.application.errors import MemoryConflictError
from factledger.application.memory.chunking import split_chunks
from factledger.application.memory.types import StoredRecord

# Rows per chunk INSERT: few statement texts for psycopg to prepare, far below PostgreSQL's
# 65,535 parameters.
CHUNK_ROWS_PER_INSERT = 32
_CHUNK_COLUMNS = "namespace, chunk_id, source_id, chunk_index, text, metadata, embedding"
_CHUNK_ROW = "(current_setting('app.namespace'), %s, %s, %s, %s, %s, %b)"


def _chunk_insert(rows: int) -> str:
    """The INSERT of `rows` chunks (every value a parameter)."""
    values = ", ".join([_CHUNK_ROW] * rows)
    return f"INSERT INTO chunks ({_CHUNK_COLUMNS}) VALUES {values}"  # noqa: S608 - placeholders only


def record_chunks(indexed_text: str) -> list[str]:
    """The searchable pieces of a record: the text that indexes it (its search text, else its
    verbatim body) cut at whitespace, exactly as the in-memory backend cuts it, so both
    backends answer chunk searches alike."""
    return split_chunks(indexed_text)


async def stored(conn: psycopg.AsyncConnection[Any], record_id: str) -> StoredRecord | None:
    cur = await conn.execute(
        "SELECT kind, body_json, metadata FROM records WHERE record_id = %s", [record_id]
    )
    row = await cur.fetchone()
    if row is None:
        return None
    return StoredRecord(record_id, row[0], row[1], metadata_from_json(row[2]))


def check_same(existing: StoredRecord, wanted: StoredRecord) -> None:
    """Records are immutable: the same id may only be written again with the same content."""
    if existing != wanted:
        raise MemoryConflictError(f"record {existing.record_id} exists with another body")


_RECORD_INSERT = (
    "INSERT INTO records (namespace, record_id, kind, body_json, body, metadata) "
    "VALUES (current_setting('app.namespace'), %s, %s, %s, %s::jsonb, %s) "
    "ON CONFLICT (namespace, record_id) DO NOTHING"
)
# A chunk row written only when the record's INSERT wrote a row (`insert_at_once`).
_CHUNK_OF_NEW_RECORD = (
    "SELECT current_setting('app.namespace'), %s::text, %s::text, %s::integer, %s::text, "
    "%s::jsonb, %b FROM record"
)


def _chunk_rows(
    record: StoredRecord, metadata_json: str, chunks: list[str], vectors: np.ndarray[Any, Any]
) -> list[tuple[Any, ...]]:
    return [
        (f"{record.record_id}#{i}", record.record_id, i, text, metadata_json, vector)
        for i, (text, vector) in enumerate(zip(chunks, vectors, strict=True))
    ]


def insert_at_once(
    record: StoredRecord,
    metadata_json: str,
    chunks: list[str],
    vectors: np.ndarray[Any, Any],
) -> tuple[str, list[Any]] | None:
    """One statement that inserts the record and, only when it wrote the record (not a
    replay, not a concurrent writer's), its chunks, answering 1 or 0 (ADR 0103): with the
    namespace's binding, one round trip (`PgvectorConnections.in_one_trip`). None for a
    record of more chunks than one INSERT carries: `insert` writes it."""
    if len(chunks) > CHUNK_ROWS_PER_INSERT:
        return None
    args: list[Any] = [record.record_id, record.kind, record.body_json, record.body_json]
    args.append(metadata_json)
    rows = _chunk_rows(record, metadata_json, chunks, vectors)
    written = ""
    if rows:
        union = " UNION ALL ".join([_CHUNK_OF_NEW_RECORD] * len(rows))
        written = f", chunk AS (INSERT INTO chunks ({_CHUNK_COLUMNS}) {union})"
        args += [value for row in rows for value in row]
    statement = (
        f"WITH record AS ({_RECORD_INSERT} RETURNING record_id){written} "  # noqa: S608
        "SELECT count(*) FROM record"
    )
    return statement, args


async def insert(
    conn: psycopg.AsyncConnection[Any],
    record: StoredRecord,
    metadata_json: str,
    chunks: list[str],
    vectors: np.ndarray[Any, Any],
) -> bool:
    """Inserts the record and its chunks; False when a concurrent writer got there first."""
    cur = await conn.execute(
        _RECORD_INSERT,
        [record.record_id, record.kind, record.body_json, record.body_json, metadata_json],
    )
    if cur.rowcount == 0:
        return False
    rows = _chunk_rows(record, metadata_json, chunks, vectors)
    # A multi-row INSERT per group of chunks: a record has one or a few, and a pipeline costs
    # the event loop more than the round trip it saves at that size.
    for first in range(0, len(rows), CHUNK_ROWS_PER_INSERT):
        group = rows[first : first + CHUNK_ROWS_PER_INSERT]
        await conn.execute(_chunk_insert(len(group)), [value for row in group for value in row])
    return True


async def delete(conn: psycopg.AsyncConnection[Any], record_ids: list[str]) -> set[str]:
    """Hard-deletes records and their chunks (erasure); returns the ids that existed.

    The bound connection's row-level security limits both deletes to its namespace.
    """
    cur = await conn.execute(
        "DELETE FROM records WHERE namespace = current_setting('app.namespace') "
        "AND record_id = ANY(%s) RETURNING record_id",
        [record_ids],
    )
    found = {row[0] for row in await cur.fetchall()}
    if found:
        await conn.execute(
            "DELETE FROM chunks WHERE namespace = current_setting('app.namespace') "
            "AND source_id = ANY(%s)",
            [sorted(found)],
        )
    return found
