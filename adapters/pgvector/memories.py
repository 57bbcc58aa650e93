"""Reading and retiring facts in the pgvector backend: list, get, soft forget, expiry, drop.

Every function runs inside a transaction already bound to one namespace, so none of them
names the namespace: Row-Level Security shows only that namespace's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from factledger.adapters.pgvector.filters import metadata_from_json
from factledger.adapters.pgvector.search import relations_from_json
from factledger.application.memory.types import ForgetResult, MemoryFact

_FACT_COLUMNS = (
    "id, text, slot, is_latest, is_inference, "
    "(is_forgotten OR (expires_at IS NOT NULL AND expires_at <= %s)) AS is_forgotten, "
    "occurred_at, document_id, version, relations, condition, forget_reason, expires_at, "
    "source_indexes, metadata"
)
# What a forgotten memory's words, and the messages they came from, are replaced with.
SHREDDED = "[forgotten]"
# The document's messages at the memory's source indexes (every message when it has none).
_SHRED_MESSAGES = """UPDATE documents d SET transcript = (
    SELECT coalesce(jsonb_agg(CASE WHEN cardinality(%(indexes)s::int[]) = 0
        OR (m.n - 1) = ANY(%(indexes)s::int[])
        THEN jsonb_set(m.message, '{text}', to_jsonb(%(shredded)s::text)) ELSE m.message END
        ORDER BY m.n), '[]'::jsonb)
    FROM jsonb_array_elements(d.transcript) WITH ORDINALITY AS m(message, n))
    WHERE document_id = %(document)s"""
# Dropping a namespace empties these; ann_indexes rows go too, and maintenance drops the index.
NAMESPACE_TABLES = ("memories", "chunks", "records", "documents", "ann_indexes")
# Kept by triggers from `memories` (`term_stats`): erased with it, never written directly.
DERIVED_TABLES = ("memory_terms",)


async def list_facts(
    conn: psycopg.AsyncConnection[Any],
    *,
    now: datetime,
    include_superseded: bool,
    include_forgotten: bool,
    limit: int,
    offset: int,
) -> list[MemoryFact]:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            f"SELECT {_FACT_COLUMNS} FROM memories "  # noqa: S608 -- constant column list
            "WHERE (%s OR is_latest) AND (%s OR (NOT is_forgotten "
            "AND (expires_at IS NULL OR expires_at > %s))) ORDER BY seq LIMIT %s OFFSET %s",
            [now, include_superseded, include_forgotten, now, limit, offset],
        )
        return [to_fact(r) for r in await cur.fetchall()]


async def get_fact(
    conn: psycopg.AsyncConnection[Any], memory_id: str, *, now: datetime
) -> MemoryFact | None:
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            f"SELECT {_FACT_COLUMNS} FROM memories WHERE id = %s",  # noqa: S608
            [now, memory_id],
        )
        row = await cur.fetchone()
    return None if row is None else to_fact(row)


async def forget(
    conn: psycopg.AsyncConnection[Any], memory_ids: Sequence[str], *, reason: str
) -> ForgetResult:
    """Soft forget: the fact stays, with its id and reason, but leaves default search and
    listings. Its words are shredded: its text and condition, and the messages of
    its document it was drawn from (all of them when it names none). The first reason stands,
    so forgetting twice changes nothing."""
    wanted = list(dict.fromkeys(memory_ids))
    cur = await conn.execute(
        "SELECT id, is_forgotten, document_id, source_indexes FROM memories "
        "WHERE id = ANY(%s) FOR UPDATE",
        [wanted],
    )
    rows = await cur.fetchall()
    found = {r[0] for r in rows}
    fresh = [r for r in rows if not r[1]]
    if fresh:
        await conn.execute(
            "UPDATE memories SET forget_reason = %s, is_forgotten = true, text = %s, "
            "condition = NULL, lexical_terms = '{}', slot_terms = '{}' WHERE id = ANY(%s)",
            [reason, SHREDDED, [r[0] for r in fresh]],
        )
    for _, _, document_id, source_indexes in fresh:
        if document_id is not None:
            await conn.execute(
                _SHRED_MESSAGES,
                {"indexes": list(source_indexes), "shredded": SHREDDED, "document": document_id},
            )
    return ForgetResult(
        forgotten=tuple(i for i in wanted if i in found),
        missing=tuple(i for i in wanted if i not in found),
    )


async def expire(conn: psycopg.AsyncConnection[Any], memory_id: str, *, at: datetime) -> bool:
    cur = await conn.execute("UPDATE memories SET expires_at = %s WHERE id = %s", [at, memory_id])
    return cur.rowcount > 0


async def drop(conn: psycopg.AsyncConnection[Any]) -> None:
    for table in NAMESPACE_TABLES:
        # RLS already limits the delete to the bound namespace; the WHERE is belt and braces.
        await conn.execute(
            f"DELETE FROM {table} WHERE namespace = current_setting('app.namespace')"  # noqa: S608
        )


def to_fact(row: dict[str, Any]) -> MemoryFact:
    return MemoryFact(
        id=row["id"],
        text=row["text"],
        slot=row["slot"],
        is_latest=row["is_latest"],
        is_inference=row["is_inference"],
        is_forgotten=row["is_forgotten"],
        occurred_at=row["occurred_at"],
        document_id=row["document_id"],
        version=row["version"],
        relations=relations_from_json(row["relations"]),
        condition=row["condition"],
        forget_reason=row["forget_reason"],
        expires_at=row["expires_at"],
        source_indexes=tuple(row["source_indexes"]),
        metadata=metadata_from_json(row["metadata"]),
    )
