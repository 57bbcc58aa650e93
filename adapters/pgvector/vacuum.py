"""Removing erased rows from the data files.

A deleted or updated row stays in its table's pages as a dead tuple, text and all, until a
vacuum prunes it, and a plain VACUUM only unlinks it: the page's free space may still hold
its bytes until new rows overwrite them. So erasure works in two steps:

- `vacuum_tables`, right after each erasing write: the dead tuples are pruned at once, so no
  scan finds the rows (index cleanup is left to autovacuum: an HNSW index is costly to
  clean; the keyword indexes of migration 7, the GIN on `lexical_terms` and the key of
  `memory_terms`, keep a forgotten fact's keywords, lowercased and one by one, until then or
  until the compaction below, like the pages' free space);
- `compact_tables`, on the worker's compaction round (and `factledger pgvector maintain`):
  `VACUUM (FULL)` rewrites each table that saw an erasure into new files and unlinks the old
  ones, which removes the leftover bytes. It locks the table while it copies, which is why it
  runs on a timer rather than after each forget.

Why not a plain VACUUM for the compaction, which takes no lock writers wait on: pruning
compacts a page's live tuples but does not zero the space it frees, so a forgotten value's
bytes stay readable in the file until new rows happen to overwrite them (the canary tests
show it). Only the rewrite leaves no byte behind, so correctness keeps it. What keeps it from
stalling writers is `lock_timeout`: a rewrite that cannot have its table's lock at once would
otherwise queue, and every writer arriving after it would queue behind it for as long as the
transaction in the way lasts. It gives up instead, and the table waits for the next round.
While a rewrite runs, writers of that one table wait for as long as its copy takes.

Both need the tables' owner and no transaction block, so they run on their own autocommit
connection as the owner.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg import errors, sql

_PRUNE = "VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF) {}"
_REWRITE = "VACUUM (FULL) {}"


async def vacuum_tables(admin_conninfo: str, schema: str, tables: Sequence[str]) -> None:
    """Prunes the dead tuples of `tables`."""
    await _each(admin_conninfo, schema, tables, _PRUNE)


async def compact_tables(
    admin_conninfo: str, schema: str, tables: Sequence[str], *, lock_timeout_ms: int
) -> tuple[str, ...]:
    """Rewrites `tables` into new files, leaving no byte of a deleted row behind; returns the
    tables it could not lock within `lock_timeout_ms` (they were left as they were; 0 waits
    for as long as it takes)."""
    busy: list[str] = []
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        await conn.execute(sql.SQL("SET lock_timeout = {}").format(sql.Literal(lock_timeout_ms)))
        for table in tables:
            try:
                await conn.execute(sql.SQL(_REWRITE).format(sql.Identifier(schema, table)))
            except errors.LockNotAvailable:
                busy.append(table)
    return tuple(busy)


async def _each(admin_conninfo: str, schema: str, tables: Sequence[str], statement: str) -> None:
    # One statement per table, so each lock is held only while its own table is worked on.
    async with await psycopg.AsyncConnection.connect(admin_conninfo, autocommit=True) as conn:
        for table in tables:
            await conn.execute(sql.SQL(statement).format(sql.Identifier(schema, table)))
