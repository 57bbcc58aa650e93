"""The keyword half of memories-mode search on pgvector (`application.memory.lexical`).

Two more candidate lists travel in the search's one statement:

- facts holding any query keyword (the `lexical_terms` written at ingest), most keywords
  first, so a fact whose vector missed the question but whose words match is considered;
- the document frequency of each query keyword among the searched facts, plus their count
  (the empty term), for the IDF weights: the same statistics the in-memory backend uses, so
  both backends give a fact the same score.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
from psycopg import sql

from factledger.adapters.pgvector.filters import compile_filter
from factledger.application.memory.lexical import coverage, fused_score, idf_weights
from factledger.application.memory.types import Namespace, SearchQuery

# The rows of the frequency list: only `id` (the term) and `score` (its count) mean anything.
_FREQUENCY_COLUMNS = sql.SQL(
    "t AS id, NULL::text AS text, NULL::boolean AS is_latest, NULL::boolean AS is_inference, "
    "NULL::boolean AS is_forgotten, NULL::timestamptz AS occurred_at, NULL::text AS document_id, "
    "NULL::jsonb AS relations, NULL::jsonb AS metadata, NULL::integer[] AS source_indexes, "
    "count(*)::double precision AS score, NULL::real AS text_rank, "
    "NULL::text[] AS lexical_terms"
)
_TERMS = sql.SQL("string_to_array(%s, ' ')")


def terms_argument(terms: list[str]) -> str:
    """Keywords are `[a-z0-9]+`, so a space-joined string carries them; the trailing empty term
    asks the frequency list for the number of searched facts too."""
    return " ".join([*terms, ""]) if terms else ""


def keyword_statements(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    *,
    columns: sql.Composable,
    visible: tuple[sql.Composable, list[Any]],
    now: datetime,
    depth: int,
    terms: list[str],
) -> list[tuple[sql.Composed, list[Any]]]:
    """The keyword candidates and the keyword frequencies, each a statement and its arguments."""
    where_visible, visible_params = visible
    where_filter, filter_params = compile_filter(query.filters, sql.SQL("metadata"))
    where = sql.SQL("namespace = %s AND {} AND {}").format(where_visible, where_filter)
    where_args: list[Any] = [ns, *visible_params, *filter_params]
    words = terms_argument(terms)
    candidates = sql.SQL(
        "SELECT {cols}, 1 - (embedding <=> %b) AS score, NULL::real AS text_rank FROM memories "
        "WHERE {where} AND lexical_terms && {terms} ORDER BY cardinality(ARRAY("
        "SELECT unnest(lexical_terms) INTERSECT SELECT unnest({terms}))) DESC, "
        "embedding <=> %b, id LIMIT %s"
    ).format(cols=columns, where=where, terms=_TERMS)
    frequencies = sql.SQL(
        "SELECT {cols} FROM memories CROSS JOIN unnest({terms}) AS t "
        "WHERE {where} AND (t = '' OR lexical_terms @> ARRAY[t]) GROUP BY t"
    ).format(cols=_FREQUENCY_COLUMNS, terms=_TERMS, where=where)
    return [
        (candidates, [now, vector, *where_args, words, words, vector, depth]),
        (frequencies, [words, *where_args]),
    ]


def rank_by_keywords(
    query: SearchQuery,
    terms: list[str],
    candidates: list[dict[str, Any]],
    frequencies: list[dict[str, Any]],
) -> list[tuple[dict[str, Any], float]]:
    """Fused scores of the candidates that reach the threshold, best first, at most `limit`."""
    frequency = {row["id"]: int(row["score"]) for row in frequencies}
    searched = frequency.pop("", 0)
    weights = idf_weights(terms, frequency, searched)
    unique = {row["id"]: row for row in candidates}
    scored = [
        (
            row,
            fused_score(
                min(1.0, row["score"]), coverage(terms, weights, set(row["lexical_terms"]))
            ),
        )
        for row in unique.values()
    ]
    kept = [(row, score) for row, score in scored if score >= query.threshold]
    kept.sort(key=lambda pair: (-pair[1], pair[0]["id"]))
    return kept[: query.limit]


def fused_exact_statement(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    *,
    columns: sql.Composable,
    list_columns: sql.Composable,
    visible: tuple[sql.Composable, list[Any]],
    now: datetime,
    depth: int,
    terms: list[str],
) -> tuple[sql.Composed, list[Any]]:
    """Memories mode on a namespace searched exactly (no ANN index): the three lists (vector
    0, keyword candidates 1, frequencies 2) read the namespace's rows once, from one CTE,
    instead of three scans of the same rows."""
    where_visible, visible_params = visible
    where_filter, filter_params = compile_filter(query.filters, sql.SQL("metadata"))
    words = terms_argument(terms)
    statement = sql.SQL(
        "WITH m AS MATERIALIZED (SELECT {cols}, 1 - (embedding <=> %b) AS score, "
        "NULL::real AS text_rank FROM memories WHERE namespace = %s AND {vis} AND {f}) "
        "(SELECT 0 AS list_no, {out} FROM (SELECT * FROM m ORDER BY score DESC, id LIMIT %s) AS l) "
        "UNION ALL (SELECT 1, {out} FROM (SELECT * FROM m WHERE lexical_terms && {terms} "
        "ORDER BY cardinality(ARRAY(SELECT unnest(lexical_terms) INTERSECT "
        "SELECT unnest({terms}))) DESC, score DESC, id LIMIT %s) AS l) "
        "UNION ALL (SELECT 2, {out} FROM (SELECT {freq} FROM m CROSS JOIN unnest({terms}) AS t "
        "WHERE t = '' OR lexical_terms @> ARRAY[t] GROUP BY t) AS l)"
    ).format(
        cols=columns,
        vis=where_visible,
        f=where_filter,
        out=list_columns,
        terms=_TERMS,
        freq=_FREQUENCY_COLUMNS,
    )
    args = [now, vector, ns, *visible_params, *filter_params, depth, words, words, depth, words]
    return statement, args
