"""A bounded memories-mode search ranked in the database, in one statement (ADR 0050).

ADR 0030's bounded search, ADR 0048's deeper vector list, and ADR 0045's holders of every
required keyword, with the steps that ran in Python between two round trips moved into CTEs
of one statement:

1. the kept keyword frequencies (`memory_terms`, less the facts whose expiry passed
   unflagged, as `keyword_bound.kept_frequencies_statement` counts them) and, from them, the
   IDF weights (`lexical.idf_weights`'s formula);
2. the vector list (the partial HNSW index, or the exact scan, `depth` rows) with each row's
   fused score (`lexical.fused_score` of the cosine and `lexical.coverage` of its
   `lexical_terms`);
3. the bar (the `limit`-th best fused score, or the threshold), the lowest cosine of the list
   (the bound of any fact outside it) and the holder bound of `keyword_bound.holder_bound`: the
   held keywords, lightest first, are dropped while a fact holding only those could not reach
   the bar (a running sum), the least weight a fact outside must hold, the required keywords;
4. only when that bound admits any, the holders, through the same owner-run functions
   (`keyword_holders`, `keyword_holders_of_all`) and with the same cut at the bar and at
   `HOLDER_LIMIT` as `keyword_bound.holders_statement`;
5. the union, each fact once, ranked by its fused score: only the rows that can be in the
   answer leave the server (the top `limit` and any within `_MARGIN` of the limit-th), with
   their columns, and the frequency rows, so `keywords.rank_by_keywords` scores them again
   in Python, exactly as the two-statement form does.

Every comparison in SQL leans the conservative way by `_MARGIN` (a lower bar, fewer keywords
dropped or required, a lower weight needed): SQL's float sums may differ from Python's in the
last place, and fetching more than needed cannot change an answer, since the ranking is
exhaustive over what is fetched and Python ranks the rows again.

The statement depends on the namespace (a literal when it has an ANN index: the partial index
matches only a constant), the query's visibility flags, `limit` and `depth`: its text is
composed once per such shape and cached (`fused_statement`), then prepared per connection with
the generic plan forced (`prepared_search`). The arguments are named, so the vector is sent
once however often the text uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np
from psycopg import sql

from factledger.adapters.pgvector.keyword_bound import HOLDER_LIMIT
from factledger.adapters.pgvector.term_stats import HOLDERS_FUNCTION, HOLDERS_OF_ALL_FUNCTION
from factledger.application.memory.lexical import LEXICAL_WEIGHT, UNHELD_WEIGHT
from factledger.application.memory.types import Namespace, SearchQuery

# `keyword_bound._TIE`: the bar sits this far under the limit-th score, as there.
_TIE = 1e-9
# How far every comparison here leans towards fetching more than Python's bound would (SQL's
# float sums against Python's, in the last place): never less, so never another answer.
_MARGIN = 1e-9
# The list numbers of the rows returned: the candidates as the keyword candidates of
# `rank_rows` (its vector list is cut at the depth; these are ranked whole),
# the frequencies as its frequency list, then one row that says what the bound did.
CANDIDATES_LIST_NO, FREQUENCY_LIST_NO, BOUND_LIST_NO = 1, 2, 3
# Cache of composed statements: a namespace with an ANN index is one shape per visibility,
# limit and depth (the namespace is a literal); the rest share theirs.
_SHAPES = 1024


@dataclass(frozen=True, slots=True)
class FusedShape:
    """What the statement's text depends on: its arguments are the rest."""

    namespace: Namespace | None  # a literal (an ANN index's namespace), or None: an argument
    include_inferred: bool
    include_superseded: bool
    include_forgotten: bool
    limit: int
    depth: int


def fused_shape(ns: Namespace, query: SearchQuery, *, ann: bool, depth: int) -> FusedShape:
    return FusedShape(
        ns if ann else None,
        query.include_inferred,
        query.include_superseded,
        query.include_forgotten,
        query.limit,
        depth,
    )


def fused_arguments(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    *,
    now: datetime,
    terms: list[str],
) -> dict[str, Any]:
    """The statement's arguments: keywords are `[a-z0-9]+`, so a space-joined string carries
    them (the frequencies also ask for the empty one, the number of searched facts)."""
    return {
        "ns": ns,
        "now": now,
        "terms": " ".join(terms),
        "vec": vector,
        "threshold": float(query.threshold),
    }


def _classes(shape: FusedShape, prefix: str) -> sql.Composable:
    """The visibility classes the query admits (`keyword_bound._classes`)."""
    parts = ["TRUE"]
    if not shape.include_inferred:
        parts.append(f"NOT {prefix}is_inference")
    if not shape.include_superseded:
        parts.append(f"{prefix}is_latest")
    if not shape.include_forgotten:
        parts.append(f"NOT {prefix}is_forgotten")
    return sql.SQL(" AND ".join(parts))


def _visible(shape: FusedShape, prefix: str) -> sql.Composable:
    """The facts a search sees (`search.visibility`): the classes, and unexpired unless
    forgotten facts are asked for."""
    expiry = (
        sql.SQL("")
        if shape.include_forgotten
        else sql.SQL(" AND ({p}expires_at IS NULL OR {p}expires_at > %(now)s)").format(
            p=sql.SQL(prefix)
        )
    )
    return sql.SQL("{}{}").format(_classes(shape, prefix), expiry)


# The query's keywords and the empty one (which counts the searched facts).
_WORDS = sql.SQL("array_append(string_to_array(%(terms)s, ' '), '')")


def _frequencies(shape: FusedShape) -> sql.Composable:
    """(term, facts) for each query keyword and the empty one, as
    `keyword_bound.kept_frequencies_statement` counts them."""
    counted = sql.SQL(
        "SELECT term AS t, facts AS c FROM memory_terms "
        "WHERE namespace = %(ns)s AND term = ANY({words}) AND {classes}"
    ).format(words=_WORDS, classes=_classes(shape, ""))
    if not shape.include_forgotten:
        # Expired but not flagged forgotten: counted as visible, searched as forgotten.
        counted = sql.SQL(
            "{} UNION ALL SELECT x.t, -1 FROM memories AS m "
            "CROSS JOIN LATERAL (SELECT DISTINCT u.t FROM "
            "unnest(array_append(m.lexical_terms, '')) AS u(t)) AS x "
            "WHERE m.namespace = %(ns)s AND NOT m.is_forgotten AND m.expires_at <= %(now)s "
            "AND {classes} AND x.t = ANY({words})"
        ).format(counted, classes=_classes(shape, "m."), words=_WORDS)
    return sql.SQL("SELECT t, sum(c)::double precision AS c FROM ({}) AS k GROUP BY t").format(
        counted
    )


# The fused score of a row with cosine `score` and keywords `lexical_terms` (`fused_score` of
# `coverage`: the share of the query's keyword weight the row holds).
_FUSED = (
    "least(1.0::float8, least(1.0::float8, {cos}) + {lw} * CASE WHEN (SELECT total FROM tw) > 0 "
    "THEN (SELECT coalesce(sum(w.w), 0) FROM w WHERE w.t = ANY({terms})) / (SELECT total FROM tw) "
    "ELSE 0.0::float8 END)"
)


def _fused(cos: str, terms: str) -> sql.Composable:
    return sql.SQL(_FUSED.format(cos=cos, terms=terms, lw="{lw}")).format(lw=_LW)


_LW = sql.SQL(f"{LEXICAL_WEIGHT!r}::float8")


@lru_cache(maxsize=_SHAPES)
def fused_statement(shape: FusedShape) -> bytes:
    """The statement's text for `shape` (see the module's doc), composed once."""
    ns = sql.Literal(shape.namespace) if shape.namespace is not None else sql.SQL("%(ns)s")
    exact = shape.namespace is None
    statement = sql.SQL(
        # The arguments, once.
        "WITH q AS MATERIALIZED (SELECT u.t, u.n FROM unnest(string_to_array(%(terms)s, ' ')) "
        "WITH ORDINALITY AS u(t, n)), "
        # 1. The kept frequencies, and the IDF weights (`idf_weights`).
        "f AS MATERIALIZED ({frequencies}), "
        "n AS MATERIALIZED (SELECT coalesce((SELECT c FROM f WHERE t = ''), 0) AS searched), "
        "w AS MATERIALIZED (SELECT q.t, q.n, coalesce(f.c, 0) AS held, "
        "CASE WHEN coalesce(f.c, 0) > 0 THEN 1.0::float8 ELSE {unheld} END "
        "* ln(1.0::float8 + (n.searched - coalesce(f.c, 0) + 0.5::float8) "
        "/ (coalesce(f.c, 0) + 0.5::float8)) AS w "
        "FROM q LEFT JOIN f ON f.t = q.t CROSS JOIN n), "
        "tw AS MATERIALIZED (SELECT coalesce(sum(w), 0) AS total, "
        "coalesce(sum(w) FILTER (WHERE held > 0), 0) AS held_total FROM w), "
        # 2. The vector list, as `search.ranked_statement` reads it, and its fused scores.
        "v AS MATERIALIZED (SELECT * FROM (SELECT id, 1 - (embedding <=> %(vec)b) AS score, "
        "lexical_terms FROM memories WHERE namespace = {ns} AND {visible} "
        "ORDER BY embedding <=> %(vec)b LIMIT {depth}) AS c WHERE c.score >= -1), "
        "vs AS MATERIALIZED (SELECT v.id, v.score, {fused_v} AS fused FROM v), "
        # 3. The bar, the bounding cosine, and the holder bound (`holder_bound`), leaning the
        # conservative way by `_MARGIN`.
        "b0 AS MATERIALIZED (SELECT greatest(%(threshold)s::float8, coalesce((SELECT fused "
        "FROM vs ORDER BY fused DESC OFFSET {kth} LIMIT 1), -1.0::float8)) - {lean} "
        "AS bar, least(1.0::float8, (SELECT min(score) FROM v)) AS outside, "
        "(SELECT count(*) FROM v) AS listed, (SELECT total FROM tw) AS total, "
        "(SELECT held_total FROM tw) AS held_total), "
        # The held keywords, lightest first, with the weight of those up to each: a keyword
        # is dropped while a fact holding it and the lighter ones only stays under the bar.
        'hw AS MATERIALIZED (SELECT w.t, w.w, sum(w.w) OVER (ORDER BY w.w, w.t COLLATE "C" '
        "ROWS UNBOUNDED PRECEDING) AS running FROM w WHERE w.held > 0), "
        "b1 AS MATERIALIZED (SELECT b0.*, "
        "greatest(0.0::float8, least(1.0::float8, (b0.bar - b0.outside) / {lw}) - {lean}) "
        "* b0.total AS needed FROM b0), "
        "b AS MATERIALIZED (SELECT b1.bar, b1.needed, "
        "(SELECT array_agg(hw.t) FROM hw WHERE b1.total > 0 AND least(1.0::float8, b1.outside "
        "+ {lw} * (hw.running / b1.total)) >= b1.bar) AS kept, "
        "(SELECT array_agg(hw.t) FROM hw WHERE b1.held_total - hw.w < b1.needed - {lean}) "
        "AS required, "
        "(SELECT array_agg(hw.t ORDER BY hw.t) FROM hw) AS terms, "
        "(SELECT array_agg(hw.w ORDER BY hw.t) FROM hw) AS weights, "
        "b1.listed > 0 AND least(1.0::float8, b1.outside + {lw}) >= b1.bar "
        "{complete} AS admits FROM b1), "
        # 4. The holders, only when the bound admits any: of every required keyword, or of any
        # keyword kept (`holders_statement`).
        "hid AS (SELECT k.id FROM b CROSS JOIN LATERAL {holders_of_all}(b.required, b.terms, "
        "b.weights, b.needed) AS k(id) WHERE b.admits AND b.kept IS NOT NULL "
        "AND b.required IS NOT NULL "
        "UNION ALL SELECT k.id FROM b CROSS JOIN LATERAL {holders}(b.kept, b.terms, b.weights, "
        "b.needed) AS k(id) WHERE b.admits AND b.kept IS NOT NULL AND b.required IS NULL), "
        "h AS MATERIALIZED (SELECT o.id, o.score, s.fused FROM (SELECT id, "
        "embedding <=> %(vec)b AS distance, 1 - (embedding <=> %(vec)b) AS score, lexical_terms "
        "FROM memories WHERE namespace = %(ns)s AND {visible} "
        "AND id = ANY(ARRAY(SELECT id FROM hid))) AS o, "
        "LATERAL (SELECT {fused_o} AS fused) AS s WHERE s.fused >= (SELECT bar FROM b) "
        "ORDER BY o.distance, o.id LIMIT {holder_limit}), "
        # 5. The union, each fact once, and the rows that can be in the answer.
        "c AS MATERIALIZED (SELECT id, max(score) AS score, max(fused) AS fused FROM "
        "(SELECT * FROM vs UNION ALL SELECT * FROM h) AS u "
        "WHERE fused >= %(threshold)s::float8 - {margin} GROUP BY id), "
        "top AS (SELECT c.id, c.score FROM c WHERE c.fused >= coalesce((SELECT fused FROM c "
        "ORDER BY fused DESC OFFSET {kth} LIMIT 1), -2.0::float8) - {lean}) "
        "SELECT {candidates_no} AS list_no, {columns} FROM top JOIN memories AS m "
        "ON m.namespace = %(ns)s AND m.id = top.id "
        "UNION ALL SELECT {frequency_no}, f.t, {nothing}, f.c, NULL::real, NULL::text[] FROM f "
        "UNION ALL SELECT {bound_no}, 'bound', {nothing}, "
        "CASE WHEN (SELECT admits AND kept IS NOT NULL FROM b) "
        "THEN (SELECT count(*) FROM h)::float8 ELSE -1.0::float8 END, "
        "NULL::real, NULL::text[]"
    ).format(
        frequencies=_frequencies(shape),
        unheld=sql.SQL(f"{UNHELD_WEIGHT!r}::float8"),
        ns=ns,
        visible=_visible(shape, ""),
        depth=sql.Literal(shape.depth),
        fused_v=_fused("v.score", "v.lexical_terms"),
        fused_o=_fused("o.score", "o.lexical_terms"),
        kth=sql.Literal(shape.limit - 1),
        lean=sql.SQL(f"{_TIE + _MARGIN!r}::float8"),
        margin=sql.SQL(f"{_MARGIN!r}::float8"),
        lw=_LW,
        # An exact vector list shorter than asked holds every visible fact already.
        complete=sql.SQL("AND b1.listed >= {}").format(sql.Literal(shape.depth))
        if exact
        else sql.SQL(""),
        holders_of_all=sql.Identifier(HOLDERS_OF_ALL_FUNCTION),
        holders=sql.Identifier(HOLDERS_FUNCTION),
        holder_limit=sql.Literal(HOLDER_LIMIT),
        candidates_no=sql.Literal(CANDIDATES_LIST_NO),
        columns=_CANDIDATE_COLUMNS,
        frequency_no=sql.Literal(FREQUENCY_LIST_NO),
        bound_no=sql.Literal(BOUND_LIST_NO),
        nothing=_NOTHING,
    )
    return statement.as_bytes(None)


# `search.LIST_COLUMNS`, in its order, of the returned facts (the forgotten flag of
# `search.MEMORY_COLUMNS`).
_CANDIDATE_COLUMNS = sql.SQL(
    "m.id, m.text, m.is_latest, m.is_inference, "
    "(m.is_forgotten OR (m.expires_at IS NOT NULL AND m.expires_at <= %(now)s)) AS is_forgotten, "
    "m.occurred_at, m.document_id, m.relations, m.metadata, m.source_indexes, "
    "top.score::double precision AS score, NULL::real AS text_rank, m.lexical_terms"
)
# The columns between a frequency row's term and its count.
_NOTHING = sql.SQL(
    "NULL::text, NULL::boolean, NULL::boolean, NULL::boolean, NULL::timestamptz, NULL::text, "
    "NULL::jsonb, NULL::jsonb, NULL::integer[]"
)
