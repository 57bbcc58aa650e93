"""Memories-mode keywords from the kept counts, with keyword candidates bounded by the
ranking itself (migration 7, ADR 0030).

Reading every row of a large namespace for the keyword lists cost 40-50 ms at 10,000 facts.
Here a search reads O(candidates), in one statement:

1. the vector list (the partial HNSW index or the exact scan, as before) and
   the keyword frequencies summed from `memory_terms` over the visibility classes the query
   admits, less the facts whose expiry passed unflagged (a partial index finds them);
2. from the same statement's rows, with the scoring's own formulas (`application.memory.
   lexical`, restated in SQL: `_BOUNDED`): the limit-th best fused score of the vector list is
   the bar, and the vector list's lowest cosine bounds the cosine of any fact outside it.
   Keywords are dropped lightest first while a fact holding every dropped keyword and nothing
   else could not reach the bar; only holders of the keywords left can enter the top. Those
   holders (found through the GIN index) whose held weight could lift the bounding cosine to
   the bar come back as a third list. The ranking in Python is the exhaustive one over the
   vector list and those holders: exact wherever the vector list is (the ANN index's own
   approximation stays).

Until ADR 0041 step 2 ran in Python and fetched the holders with a second statement (13% of
the bench's searches at 10,000 facts per subject, and its p95): now every search is one round
trip, whether or not holders are needed.

The bound relies on the score growing with the cosine and with the (additive) weight of the
keywords held, and, since it is now written in SQL, on its exact form: `fused_score` is
`min(1, cosine + LEXICAL_WEIGHT x coverage)` and the weights are `idf_weights`. A change of
either must change `_BOUNDED`; `tests/integration/test_pgvector_keyword_bound.py` checks the
result against the exhaustive scoring, and `tests/unit/adapters/pgvector/test_bound_form.py`
the formulas the SQL restates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from psycopg import sql

from factledger.adapters.pgvector.keywords import terms_argument
from factledger.application.memory.lexical import LEXICAL_WEIGHT
from factledger.application.memory.types import Namespace, SearchQuery

# Holders fetched at most: past it the nearest by vector are kept (a query whose every keyword
# is common and whose bar is low); the bench reports how often it is reached.
HOLDER_LIMIT = 500
_TIE = 1e-9  # float8 in PostgreSQL against float arithmetic here: never drop a tie


@dataclass(slots=True)
class BoundedSearchCounts:
    """How bounded searches went in this process (the bench prints them)."""

    searches: int = 0  # bounded searches
    with_holders: int = 0  # those whose statement fetched keyword holders
    holders: int = 0  # holders fetched in all
    at_limit: int = 0  # searches that got `HOLDER_LIMIT` holders (maybe more existed)


_FREQUENCY_COLUMNS = sql.SQL(
    "t AS id, NULL::text AS text, NULL::boolean AS is_latest, NULL::boolean AS is_inference, "
    "NULL::boolean AS is_forgotten, NULL::timestamptz AS occurred_at, NULL::text AS document_id, "
    "NULL::jsonb AS relations, NULL::jsonb AS metadata, NULL::integer[] AS source_indexes, "
    "sum(c)::double precision AS score, NULL::real AS text_rank, NULL::text[] AS lexical_terms"
)
_TERMS = sql.SQL("string_to_array(%s, ' ')")


def _classes(query: SearchQuery, prefix: str) -> sql.Composable:
    """The visibility classes the query admits, on `memory_terms` or `memories` columns."""
    parts: list[sql.Composable] = [sql.SQL("TRUE")]
    if not query.include_inferred:
        parts.append(sql.SQL(f"NOT {prefix}is_inference"))
    if not query.include_superseded:
        parts.append(sql.SQL(f"{prefix}is_latest"))
    if not query.include_forgotten:
        parts.append(sql.SQL(f"NOT {prefix}is_forgotten"))
    return sql.SQL(" AND ").join(parts)


def kept_frequencies_statement(
    ns: Namespace, query: SearchQuery, *, now: datetime, terms: list[str]
) -> tuple[sql.Composed, list[Any]]:
    """Rows (term, facts) for each query keyword and the empty one (the searched facts)."""
    words = terms_argument(terms)
    counted = sql.SQL(
        "SELECT term AS t, facts AS c FROM memory_terms "
        "WHERE namespace = %s AND term = ANY({terms}) AND {classes}"
    ).format(terms=_TERMS, classes=_classes(query, ""))
    args: list[Any] = [ns, words]
    if not query.include_forgotten:
        # Expired but not flagged forgotten: counted as visible, searched as forgotten.
        counted = sql.SQL(
            "{} UNION ALL SELECT x.t, -1 FROM memories AS m "
            "CROSS JOIN LATERAL (SELECT DISTINCT u.t FROM "
            "unnest(array_append(m.lexical_terms, '')) AS u(t)) AS x "
            "WHERE m.namespace = %s AND NOT m.is_forgotten AND m.expires_at <= %s AND {classes} "
            "AND x.t = ANY({terms})"
        ).format(counted, classes=_classes(query, "m."), terms=_TERMS)
        args += [ns, now, words]
    statement = sql.SQL("SELECT {cols} FROM ({counted}) AS f GROUP BY t").format(
        cols=_FREQUENCY_COLUMNS, counted=counted
    )
    return statement, args


# The step-two bound, in SQL, evaluated in the search's one statement (ADR 0041). Its CTEs:
# v the vector list, f the kept frequencies, q each query keyword's IDF weight (`idf_weights`),
# s the vector list's fused scores (`fused_score` and `coverage`), b the bar and the bounding
# cosine, h the least coverage that lifts that cosine to the bar (`fused_score` is linear below
# its cap of 1, so in closed form) and n the weight a holder must hold, d the held keywords
# lightest first with their running weight, l what `keyword_holders` looks up: a keyword every
# such holder holds (one whose weight the others cannot make up), the rarest, when there is
# one; else the keywords left after dropping the lightest.
_BOUNDED = """WITH v AS MATERIALIZED ({vector_list}),
f AS MATERIALIZED ({frequencies}),
q AS (SELECT u.t, coalesce(f.score, 0) AS df, coalesce(f.score, 0) > 0 AS held,
  ln(1.0 + (n.n - coalesce(f.score, 0) + 0.5) / (coalesce(f.score, 0) + 0.5)) AS w
  FROM unnest(string_to_array(%s, ' ')) AS u(t)
  CROSS JOIN (SELECT coalesce(max(score) FILTER (WHERE id = ''), 0) AS n FROM f) AS n
  LEFT JOIN f ON f.id = u.t),
k AS (SELECT coalesce(sum(w), 0) AS total FROM q),
s AS (SELECT least(1.0, v.score) AS cos, least(1.0, least(1.0, v.score) + {weight} * CASE
  WHEN k.total > 0 THEN (SELECT coalesce(sum(q.w), 0) FROM q WHERE q.t = ANY(v.lexical_terms))
  / k.total ELSE 0 END) AS fused FROM v CROSS JOIN k),
b AS (SELECT greatest(%s::double precision, coalesce((SELECT s.fused FROM s
  ORDER BY s.fused DESC OFFSET {kth} LIMIT 1), -1.0)) - {tie} AS bar,
  (SELECT min(s.cos) FROM s) AS outside, k.total FROM k),
h AS (SELECT (b.bar - b.outside) / {weight} - {tie} AS cov, b.total FROM b
  WHERE b.outside IS NOT NULL AND ({approximate} OR (SELECT count(*) FROM v) >= {depth})),
n AS (SELECT h.cov, h.total, greatest(0.0, h.cov) * h.total AS needed FROM h
  WHERE h.cov <= 1.0),
d AS (SELECT q.t, q.w, q.df, sum(q.w) OVER (ORDER BY q.w, q.t COLLATE "C") AS cw,
  sum(q.w) OVER () AS all_held FROM q WHERE q.held),
l AS (SELECT coalesce((SELECT ARRAY[r.t] FROM d AS r WHERE r.all_held - r.w < n.needed - {tie}
  ORDER BY r.df, r.t COLLATE "C" LIMIT 1), array_agg(d.t) FILTER (WHERE d.cw >= n.cov * n.total))
  AS lookup, array_agg(d.t) AS terms, array_agg(d.w) AS weights, n.needed
  FROM n CROSS JOIN d GROUP BY n.cov, n.total, n.needed)
SELECT 0 AS list_no, {out} FROM v
UNION ALL (SELECT 1, {out} FROM (SELECT {cols}, 1 - (embedding <=> %b) AS score,
  NULL::real AS text_rank FROM memories WHERE namespace = %s AND {vis}
  AND id = ANY(ARRAY(SELECT keyword_holders(l.lookup, l.terms, l.weights, l.needed) FROM l
  WHERE cardinality(l.lookup) > 0))
  ORDER BY embedding <=> %b, id LIMIT {holders}) AS l)
UNION ALL SELECT 2, {out} FROM f"""


@dataclass(frozen=True, slots=True)
class BoundedLists:
    """What a bounded statement is made of, beside the query."""

    vector_list: tuple[sql.Composable, list[Any]]  # the vector list's statement, unfiltered
    columns: sql.Composable  # a memory row's columns (`search.MEMORY_COLUMNS`)
    list_columns: sql.Composable  # the columns of every candidate list (`search.LIST_COLUMNS`)
    depth: int  # the vector list's length
    approximate: bool  # the vector list comes from an ANN index (else it is exact)


def bounded_statement(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    parts: BoundedLists,
    *,
    visible: tuple[sql.Composable, list[Any]],
    now: datetime,
    terms: list[str],
) -> tuple[sql.Composed, list[Any]]:
    """The vector list (list 0), the keyword holders that can still reach the top (list 1)
    and the kept frequencies (list 2), in one statement (see the module's doc).

    The holders are those the ranking in Python (`rank_by_keywords`) could place in the top
    `limit`: a superset by `_TIE`, never fewer. An exact vector list shorter than its depth
    holds every visible fact already: no holders then.
    """
    frequencies, frequency_args = kept_frequencies_statement(ns, query, now=now, terms=terms)
    vector_list, vector_args = parts.vector_list
    where_visible, visible_params = visible
    statement = sql.SQL(_BOUNDED).format(
        vector_list=vector_list,
        frequencies=frequencies,
        weight=sql.Literal(LEXICAL_WEIGHT),
        kth=sql.Literal(query.limit - 1),
        tie=sql.Literal(_TIE),
        approximate=sql.Literal(parts.approximate),
        depth=sql.Literal(parts.depth),
        out=parts.list_columns,
        cols=parts.columns,
        vis=where_visible,
        holders=sql.Literal(HOLDER_LIMIT),
    )
    args = [
        *vector_args,
        *frequency_args,
        " ".join(terms),
        query.threshold,
        now,
        vector,
        ns,
        *visible_params,
        vector,
    ]
    return statement, args
