"""Removing erased rows from the data files (ADR 0015).

A deleted or updated row stays in its table's pages as a dead tuple, text and all, until a
vacuum prunes it, and a plain VACUUM only unlinks it: the page's free space may still hold
its bytes until new rows overwrite them. So erasure works in two steps:

- `vacuum_tables`, right after each erasing write: the dead tuples are pruned at once, so no
  scan finds the rows (index cleanup is left to autovacuum: an HNSW index is costly to
  clean; the keyword indexes of migration 7, the GIN on `lexical_terms` and the key of
  `memory_terms`, keep a forgotten fact's keywords, lowercased and one by one, until then or
  until the compaction below, like the pages' free space);
- `compact_tables`, on the worker's maintenance round (and `factledger pgvector maintain`):
  `VACUUM (FULL)` rewrites each table that saw an erasure into new files and unlinks the old
  ones, which removes the leftover bytes. It locks the table while it copies, which is why it
  runs on a timer rather than after each forget.

Both need the tables' owner and no transaction block, so they run on their own autocommit
connection as the owner.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import sql

_PRUNE = "VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF) {}"
_REWRITE = "VACUUM (FULL) {}"


async def vacuum_tables(admin_conninfo: str, schema: str, tables: Sequence[str]) -> None:
    """Prunes the dead tuples of `tables`."""
    await _each(admin_conninfo, schema, tables, _PRUNE)


async def compact_tables(admin_conninfo: str, schema: str, tables: Sequence[str]) -> None:
    """Rewrites `tables` into new files, leaving no byte of a deleted row behind."""
    await _each(admin_conninfo, schema, tables, _REWRITE)


async def _each(admin_conninfo: str, schema: str, tables: Sequence[str], statement: str) -> None:
    # One statement per table, so each lock is held only while its own table is worked on.
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        for table in tables:
            await conn.execute(sql.SQL(statement).format(sql.Identifier(schema, table)))
