"""A search in one round trip: a `SECURITY INVOKER` function binds the namespace and runs the
ranked query in the same statement (migration 5).

- One `SELECT * FROM bound_search(...)` on an autocommit connection, instead of BEGIN,
  `set_config('app.namespace', ns, true)`, the query (hybrid: four) and COMMIT. The
  statement's implicit transaction scopes the transaction-local setting, which PostgreSQL
  undoes when the statement ends, so a connection goes back to the pool bound to nothing.
- Isolation is the same as with the explicit transaction: the function runs as its caller
  (the application role), so the row-level security policies apply to the statement it runs.
  It grants nothing: the role could send the same statement itself.
- The client still composes the SQL (`pgvector_search.py`); every value travels as a bound
  argument (`$1` the query vector, `$2[i]` the others as text, cast back to their type), never
  as SQL text. `EXECUTE ... USING` plans each call with its values known, so the exact scan of
  one namespace and the partial HNSW index of a large one are chosen as for a plain query
  (`bound_explain` shows the plan of the very statement a search runs).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.abc import AdaptContext

from factledger.adapters.pgvector.prepared_search import search_cursor

if TYPE_CHECKING:  # pgvector_schema lists this module's migration
    from factledger.adapters.pgvector.schema import SchemaOptions, Statement

SEARCH_FUNCTION = "bound_search"
EXPLAIN_FUNCTION = "bound_explain"
# The rows every candidate list returns, in this order (`pgvector_search.LIST_COLUMNS`).
RESULT_COLUMNS = (
    "list_no integer, id text, text text, is_latest boolean, is_inference boolean, "
    "is_forgotten boolean, occurred_at timestamptz, document_id text, relations jsonb, "
    "metadata jsonb, source_indexes integer[], score double precision, text_rank real, "
    "lexical_terms text[]"
)
_PLACEHOLDER = re.compile(r"%%|%s|%b")
_INT8 = range(-(2**63), 2**63)
_END = object()  # marks an exhausted argument list


def bound_search_migration(o: SchemaOptions) -> list[Statement]:
    """Migration 5: the search and explain functions, executable by the application role only."""
    role = sql.Identifier(o.app_role)
    signature = sql.SQL("(text, integer, text, vector, text[])")
    statements: list[Statement] = []
    for name, returns, prefix in (
        (SEARCH_FUNCTION, f"TABLE ({RESULT_COLUMNS})", ""),
        (EXPLAIN_FUNCTION, "SETOF text", "EXPLAIN "),
    ):
        fn = sql.Identifier(o.schema, name)
        statements += [
            sql.SQL(
                "CREATE FUNCTION {fn}(p_namespace text, p_ef_search integer, p_statement text, "
                "p_vector vector, p_args text[]) RETURNS {returns} "
                "LANGUAGE plpgsql VOLATILE SECURITY INVOKER AS $$\n"
                "BEGIN\n"
                # Transaction-local: undone when the caller's (implicit) transaction ends.
                "  PERFORM set_config('app.namespace', p_namespace, true);\n"
                "  IF p_ef_search IS NOT NULL THEN\n"
                "    PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);\n"
                "    PERFORM set_config('hnsw.ef_search', p_ef_search::text, true);\n"
                "  END IF;\n"
                "  RETURN QUERY EXECUTE {prefix} || p_statement USING p_vector, p_args;\n"
                "END $$"
            ).format(fn=fn, returns=sql.SQL(returns), prefix=sql.Literal(prefix)),
            sql.SQL("REVOKE ALL ON FUNCTION {}{} FROM PUBLIC").format(fn, signature),
            sql.SQL("GRANT EXECUTE ON FUNCTION {}{} TO {}").format(fn, signature, role),
        ]
    return statements


def lexical_terms_migration(o: SchemaOptions) -> list[Statement]:
    """Migration 6: each memory's keywords (`application.memory.lexical`), returned by the
    search functions, which are recreated for their new result type. Facts written before it
    have none and rank by their vector alone until re-ingested."""
    table = sql.Identifier(o.schema, "memories")
    drops: list[Statement] = [
        sql.SQL("DROP FUNCTION {}(text, integer, text, vector, text[])").format(
            sql.Identifier(o.schema, name)
        )
        for name in (SEARCH_FUNCTION, EXPLAIN_FUNCTION)
    ]
    return [
        sql.SQL("ALTER TABLE {} ADD COLUMN lexical_terms text[] NOT NULL DEFAULT '{{}}'").format(
            table
        ),
        *drops,
        *bound_search_migration(o),
    ]


def function_arguments(
    context: AdaptContext | None, statement: sql.Composable, args: list[Any]
) -> tuple[str, np.ndarray[Any, Any] | None, list[str | None]]:
    """Rewrites a psycopg statement for the functions: the (one) numpy vector becomes `$1`, every
    other argument `($2[i])` cast back to its type. Returns the text, the vector and the texts."""
    text = statement.as_string(context)
    values = iter(args)
    vector: np.ndarray[Any, Any] | None = None
    texts: list[str | None] = []

    def replace(match: re.Match[str]) -> str:
        nonlocal vector
        if match.group() == "%%":
            return "%"
        value = next(values, _END)
        if value is _END:
            raise ValueError("fewer arguments than placeholders")
        if isinstance(value, np.ndarray):
            if vector is not None and not np.array_equal(vector, value):
                raise ValueError("a bound search takes one query vector")
            vector = value
            return "$1"
        texts.append(None if value is None else _as_text(value))
        return f"($2[{len(texts)}]){_cast(value)}"

    rewritten = _PLACEHOLDER.sub(replace, text)
    if next(values, _END) is not _END:
        raise ValueError("more arguments than placeholders")
    return rewritten, vector, texts


def _as_text(value: object) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same float8
    return str(value)


def _cast(value: object) -> str:
    # bool before int: True is an int in Python.
    if isinstance(value, bool):
        return "::boolean"
    if isinstance(value, int):
        return "::bigint" if value in _INT8 else "::numeric"
    if isinstance(value, float):
        return "::double precision"
    if isinstance(value, datetime):
        return "::timestamptz"
    if value is None or isinstance(value, str):
        return ""  # text already
    raise TypeError(f"no SQL type for {type(value).__name__}")


async def run_bound(
    conn: psycopg.AsyncConnection[Any],
    namespace: str,
    statement: sql.Composable,
    args: list[Any],
    *,
    ef_search: int | None,
    explain: bool = False,
) -> list[dict[str, Any]]:
    """Runs `statement` through the function, bound to `namespace`, in one round trip.

    `conn` must be in autocommit mode and idle: the call's implicit transaction is what limits
    the namespace binding to this one statement.
    """
    text, vector, texts = function_arguments(conn, statement, args)
    fn = sql.Identifier(EXPLAIN_FUNCTION if explain else SEARCH_FUNCTION)
    call = sql.SQL("SELECT * FROM {}(%s, %s::integer, %s, %b, %s::text[])").format(fn)
    cursor = search_cursor(conn)  # as the prepared path, so the two compare
    await cursor.execute(call, [namespace, ef_search, text, vector, texts])
    return await cursor.fetchall()
