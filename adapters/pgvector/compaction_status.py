"""The compaction's shared record (`compaction_status`, one row): written by the process that
erases and compacts (the sync worker), read by every API instance for its `/metrics`, since
the worker serves no metrics of its own."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import cast

import psycopg
from psycopg import sql

from factledger.application.memory.compaction import CompactionStatus

_TABLE = "compaction_status"


def status_migration(schema: str, app_role: str) -> list[sql.SQL | sql.Composed]:
    table = sql.Identifier(schema, _TABLE)
    return [
        sql.SQL(
            "CREATE TABLE {} (id integer PRIMARY KEY CHECK (id = 1), "
            "last_compacted_at timestamptz, oldest_pending_at timestamptz, "
            "pending_tables integer NOT NULL DEFAULT 0)"
        ).format(table),
        sql.SQL("INSERT INTO {} (id) VALUES (1)").format(table),
        sql.SQL("GRANT SELECT ON {} TO {}").format(table, sql.Identifier(app_role)),
    ]


async def note_erased(admin_conninfo: str, schema: str, pending: Sequence[str]) -> None:
    """An erasure left bytes in the pages until the next compaction: the clock starts."""
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        await conn.execute(
            sql.SQL(
                "UPDATE {} SET oldest_pending_at = coalesce(oldest_pending_at, now()), "
                "pending_tables = %s WHERE id = 1"
            ).format(sql.Identifier(schema, _TABLE)),
            [len(pending)],
        )


async def note_compacted(admin_conninfo: str, schema: str, busy: Sequence[str]) -> None:
    """A round ended: tables left busy keep the clock of the oldest erasure running."""
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        await conn.execute(
            sql.SQL(
                "UPDATE {} SET last_compacted_at = now(), pending_tables = %s, "
                "oldest_pending_at = CASE WHEN %s THEN oldest_pending_at END WHERE id = 1"
            ).format(sql.Identifier(schema, _TABLE)),
            [len(busy), bool(busy)],
        )


async def read_status(
    conn: psycopg.AsyncConnection[tuple[object, ...]], schema: str
) -> CompactionStatus:
    cursor = await conn.execute(
        sql.SQL(
            "SELECT last_compacted_at, oldest_pending_at, pending_tables FROM {} WHERE id = 1"
        ).format(sql.Identifier(schema, _TABLE))
    )
    row = await cursor.fetchone()
    if row is None:
        return CompactionStatus(None, None, 0)
    last, oldest, pending = cast("tuple[datetime | None, datetime | None, int]", tuple(row))
    return CompactionStatus(last, oldest, pending)
