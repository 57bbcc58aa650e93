"""Removing erased rows from the data files: a VACUUM right after an erasing write.

A deleted or updated row stays in its table's pages as a dead tuple, text and all, until a
vacuum prunes it; autovacuum gets there eventually, an erasure must not wait for it
(ADR 0015). VACUUM needs the tables' owner and no transaction block, so it runs on its own
autocommit connection as the owner. Index cleanup is left to autovacuum: the indexes of these
tables hold ids, slots and vectors, never text, and an HNSW index is costly to clean.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql


async def vacuum_tables(admin_conninfo: str, schema: str, tables: Sequence[str]) -> None:
    """Prunes the dead tuples of `tables` (each its own statement: VACUUM of several tables in
    one statement would still hold each lock only while it works, but fail as a whole)."""
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        for table in tables:
            await conn.execute(
                sql.SQL("VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF) {}").format(
                    sql.Identifier(schema, table)
                )
            )
