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
_CHUNK_ROW = "(current_setting('app.namespace'), %s, %s, %s, %s, %s, %b)"


def _chunk_insert(rows: int) -> str:
    """The INSERT of `rows` chunks (every value a parameter)."""
    values = ", ".join([_CHUNK_ROW] * rows)
    columns = "namespace, chunk_id, source_id, chunk_index, text, metadata, embedding"
    return f"INSERT INTO chunks ({columns}) VALUES {values}"  # noqa: S608 - placeholders only


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


async def insert(
    conn: psycopg.AsyncConnection[Any],
    record: StoredRecord,
    metadata_json: str,
    chunks: list[str],
    vectors: np.ndarray[Any, Any],
) -> bool:
    """Inserts the record and its chunks; False when a concurrent writer got there first."""
    cur = await conn.execute(
        "INSERT INTO records (namespace, record_id, kind, body_json, body, metadata) "
        "VALUES (current_setting('app.namespace'), %s, %s, %s, %s::jsonb, %s) "
        "ON CONFLICT (namespace, record_id) DO NOTHING",
        [record.record_id, record.kind, record.body_json, record.body_json, metadata_json],
    )
    if cur.rowcount == 0:
        return False
    rows = [
        (f"{record.record_id}#{i}", record.record_id, i, text, metadata_json, vector)
        for i, (text, vector) in enumerate(zip(chunks, vectors, strict=True))
    ]
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
