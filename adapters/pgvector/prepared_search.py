"""A search statement prepared once per connection and bound to its namespace in one pipeline,
so a search costs one round trip and no planning.

`bound_search` runs its statement through PL/pgSQL `EXECUTE`, which parses
and plans it on every call: 1-1.5 ms of a 4 ms search at 10,000 facts per subject. Here the
same statement, with the same arguments, is sent as a prepared statement (psycopg
`prepare=True`: parsed once per connection and statement text, its generic plan forced, so
it is planned once too) after a statement that binds the namespace, both
in one pipeline: sent together, run as one implicit transaction that ends at the pipeline's
only Sync, so a search stays one round trip.

- Isolation is the one of `PgvectorConnections.bound`: `set_config('app.namespace', ...,
  true)` is transaction-local, the statement runs as the application role under row-level
  security, and the Sync (a commit, or the rollback of a failed pipeline) leaves the
  connection bound to nothing.
- The HNSW settings and `plan_cache_mode` are transaction-local too.
- The generic plan is built without the arguments' values: the namespace of a partial HNSW
  index is a literal in the text (`search.ranked_statement`), so the index still matches.
- The vector list's `LIMIT` is written as a literal by the caller: a generic plan that does not
  know it costs the index scan as if it read a tenth of the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.string import TextLoader

# What a part's text may be: composed, or a cached statement's bytes (`fused_search`).
Query = sql.SQL | sql.Composed | bytes

# The generic plan, forced: in its default mode the server compares the generic plan's
# estimated cost with the custom plans' and kept planning most searches anyway, which cost
# the server more CPU per search than the generic plan it would have chosen.
_BIND = (
    "SELECT set_config('app.namespace', %s, true), "
    "set_config('plan_cache_mode', 'force_generic_plan', true)"
)
_BIND_HNSW = (
    f"{_BIND}, set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', %s, true)"
)


def search_cursor(conn: psycopg.AsyncConnection[Any]) -> psycopg.AsyncCursor[dict[str, Any]]:
    """A cursor whose jsonb columns stay text: a search reads about 20-30 rows to return a few
    hits, and parsing every row's relations and metadata cost more than the rest of the rows'
    decoding (`search.parsed_json` parses the hits' own)."""
    cursor = conn.cursor(row_factory=dict_row)
    cursor.adapters.register_loader("jsonb", TextLoader)
    return cursor


async def run_prepared(
    conn: psycopg.AsyncConnection[Any],
    namespace: str,
    statement: Query,
    args: Sequence[Any] | Mapping[str, Any],
    *,
    ef_search: int | None,
    more: Sequence[tuple[Query, Sequence[Any] | Mapping[str, Any]]] = (),
) -> list[dict[str, Any]]:
    """Runs `statement`, then each of `more`, bound to `namespace`, prepared, in one round trip;
    returns their rows in that order.

    `conn` must be an idle autocommit connection (the pool's): the pipeline's implicit
    transaction is what limits the binding to these statements.
    """
    bind, bind_args = (
        (_BIND, [namespace])
        if ef_search is None
        else (
            _BIND_HNSW,
            [namespace, str(ef_search)],
        )
    )
    parts: list[tuple[Query, Sequence[Any] | Mapping[str, Any]]] = [(statement, args), *more]
    cursors = [search_cursor(conn) for _ in parts]
    # No BEGIN/COMMIT: what a pipeline sends up to its Sync runs as one implicit transaction,
    # so the binding holds for the statements and ends with them; psycopg's `transaction()`
    # would wait for BEGIN and COMMIT (three round trips instead of one).
    async with conn.pipeline():
        await conn.execute(bind, bind_args, prepare=True)
        for cursor, (part, part_args) in zip(cursors, parts, strict=True):
            await cursor.execute(part, part_args, prepare=True)
    rows: list[dict[str, Any]] = []
    for cursor in cursors:
        rows += await cursor.fetchall()
    return rows
