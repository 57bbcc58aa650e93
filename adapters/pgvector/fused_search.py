"""A bounded memories-mode search ranked in the database, in one statement.

The bounded search (a vector list, then only the keyword holders that could still reach the
top), its deeper vector list on indexed namespaces, and the holders of every required keyword,
with the steps that ran in Python between two round trips moved into CTEs of one statement:

1. the kept keyword frequencies (`memory_terms`, less the facts whose expiry passed
   unflagged) and, from them, the
   IDF weights (`lexical.idf_weights`'s formula);
2. the vector list (the partial HNSW index, or the exact scan, `depth` rows) with each row's
   fused score (`lexical.fused_score` of the cosine and `lexical.coverage` of its
   `lexical_terms`);
3. the bar (the `limit`-th best fused score, or the threshold), the lowest cosine of the list
   (the bound of any fact outside it) and the holder bound (`keyword_bound`): the
   held keywords, lightest first, are dropped while a fact holding only those could not reach
   the bar (a running sum), the least weight a fact outside must hold, the required keywords;
4. only when that bound admits any, the holders, through the same owner-run functions
   (`keyword_holders`, `keyword_holders_of_all`) and with the same cut at the bar and at
   `HOLDER_LIMIT`;
5. the union, each fact once, ranked by its fused score: only the rows that can be in the
   answer leave the server (the top `limit` and any within the margin of the limit-th, less
   the facts capped at 1 from well above it past the first `limit` of them by id), with
   their columns, and the frequency rows, so `keywords.rank_by_keywords` scores them again
   in Python.

Measured: the client's CPU per search falls by 1-1.5 ms (it decodes 3-5 rows,
not 100 and the holders, and ranks them), the server's rises by ~0.5 ms (scoring the vector
list in SQL ~0.2 ms, the rest of the CTEs ~0.3 ms); the holders cost what they cost before.

Every comparison in SQL leans the conservative way by `_MARGIN` (a lower bar, fewer keywords
dropped or required, a lower weight needed): SQL's float sums may differ from Python's in the
last place, and fetching more than needed cannot change an answer, since the ranking is
exhaustive over what is fetched and Python ranks the rows again.

The statement depends on the namespace (a literal when it has an ANN index: the partial index
matches only a constant), the query's visibility flags, `limit` and `depth`: its text is
composed once per such shape and cached (`fused_statement`), then prepared per connection with
the generic plan forced (`prepared_search`). The arguments are named, so the vector is sent
once however often the text uses it. The text is kept under psycopg's 4,096 bytes, past
which it parses a statement's placeholders again on every call.
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

# The bar sits this far under the limit-th score: float8 here against float arithmetic in
# Python, and a tie must never be dropped.
_TIE = 1e-9
# How far every comparison here leans towards fetching more than Python's bound would (SQL's
# float sums against Python's, in the last place): never less, so never another answer.
_MARGIN = 1e-9
# The list numbers of the rows returned: the candidates as the keyword candidates of
# `rank_rows` (its vector list is cut at the depth; these are ranked whole),
# the frequencies as its frequency list, with one more row (no term) that says what the
# bound did.
CANDIDATES_LIST_NO, FREQUENCY_LIST_NO = 1, 2
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
    """The visibility classes the query admits."""
    parts = ["TRUE"]
    if not shape.include_inferred:
        parts.append(f"NOT {prefix}is_inference")
    if not shape.include_superseded:
        parts.append(f"{prefix}is_latest")
    if not shape.include_forgotten:
        parts.append(f"NOT {prefix}is_forgotten")
    return sql.SQL(" AND ".join(parts[1:] or parts))


def _visible(shape: FusedShape) -> sql.Composable:
    """The facts a search sees (`search.visibility`): the classes, and unexpired unless
    forgotten facts are asked for."""
    expiry = "" if shape.include_forgotten else " AND (expires_at IS NULL OR expires_at>%(now)s)"
    return sql.SQL("{}{}").format(_classes(shape, ""), sql.SQL(expiry))


# The query's keywords and the empty one (which counts the searched facts).
_WORDS = sql.SQL("string_to_array(%(terms)s||' ',' ')")


def _frequencies(shape: FusedShape) -> sql.Composable:
    """(term, facts) for each query keyword and the empty one, as
    the keyword counts kept per class count them."""
    counted = sql.SQL(
        "SELECT term AS t,facts AS c FROM memory_terms WHERE namespace=%(ns)s "
        "AND term=ANY({words}) AND {classes}"
    ).format(words=_WORDS, classes=_classes(shape, ""))
    if not shape.include_forgotten:
        # Expired but not flagged forgotten: counted as visible, searched as forgotten.
        counted = sql.SQL(
            "{} UNION ALL SELECT x.t,-1 FROM memories AS m,LATERAL (SELECT DISTINCT t FROM "
            "unnest(array_append(m.lexical_terms,'')) AS t) AS x WHERE m.namespace=%(ns)s "
            "AND m.expires_at<=%(now)s AND {classes} AND x.t=ANY({words})"
        ).format(counted, classes=_classes(shape, "m."), words=_WORDS)
    return sql.SQL("SELECT t,sum(c)::float8 AS c FROM ({}) AS k GROUP BY t").format(counted)


# The fused score (`fused_score` of `coverage`) of the rows of `{src}`, their cosine `score`:
# their keywords joined to the query's weights (`w`) and summed, a join rather than a subquery
# per row. `raw` is the score before the cap at 1, which tells a sure 1 (see `top`).
_SCORED = (
    "SELECT id,score,least(1,raw) AS fused,raw{more} FROM (SELECT {src}.id,{src}.score{more},"
    "least(1,{src}.score)+{lw}*coalesce(sum(w.w)/nullif(k.total,0),0) AS raw "
    "FROM {src} CROSS JOIN k LEFT JOIN w ON w.t=ANY({src}.lexical_terms) "
    "GROUP BY {src}.id,{src}.score{more},k.total) AS x"
)


def _scored(src: str, more: str = "") -> sql.Composable:
    text = _SCORED.replace("{src}", src).replace("{more}", more and f",{more}")
    return sql.SQL(text).format(lw=_LW)


_LW = sql.SQL(repr(LEXICAL_WEIGHT))


@lru_cache(maxsize=_SHAPES)
def fused_statement(shape: FusedShape) -> bytes:
    """The statement's text for `shape` (see the module's doc), composed once. Written tersely:
    psycopg caches its parsing of a statement's placeholders only below 4,096 bytes."""
    ns = sql.Literal(shape.namespace) if shape.namespace is not None else sql.SQL("%(ns)s")
    exact = shape.namespace is None
    statement = sql.SQL(
        # 1. The kept frequencies, and the IDF weights (`idf_weights`), their sums.
        "WITH f AS ({frequencies}),"
        "n AS (SELECT coalesce((SELECT c FROM f WHERE t=''),0) AS n),"
        "w AS (SELECT t,held,CASE WHEN held>0 THEN 1 ELSE {unheld} END"
        "*ln(1+(n-held+0.5)/(held+0.5)) AS w FROM (SELECT t,coalesce(f.c,0) AS held "
        "FROM unnest(string_to_array(%(terms)s,' ')) AS q(t) LEFT JOIN f USING (t)) AS q,n),"
        "k AS (SELECT coalesce(sum(w),0) AS total,coalesce(sum(w) FILTER (WHERE held>0),0) AS held "
        "FROM w),"
        # 2. The vector list, as `search.ranked_statement` reads it, and its fused scores.
        "v AS (SELECT * FROM (SELECT id,1-(embedding<=>%(vec)b) AS score,lexical_terms "
        "FROM memories WHERE namespace={ns} AND {visible} ORDER BY embedding<=>%(vec)b "
        "LIMIT {depth}) AS c WHERE c.score>=-1),"
        "vs AS ({scored_v}),"
        # 3. The bar, the bounding cosine, and the holder bound (`holder_bound`), leaning the
        # conservative way by `_MARGIN`.
        "b0 AS (SELECT greatest(%(threshold)s,coalesce((SELECT fused FROM vs ORDER BY fused DESC "
        "OFFSET {kth} LIMIT 1),-1))-{lean} AS bar,least(1,(SELECT min(score) FROM v)) "
        "AS outside,(SELECT count(*) FROM v) AS listed,k.total,k.held FROM k),"
        "b1 AS (SELECT *,greatest(0.0,least(1,(bar-outside)/{lw})-{lean})*total AS needed "
        "FROM b0),"
        # The held keywords, lightest first, with the weight of those up to each: a keyword
        # is dropped while a fact holding it and the lighter ones only stays under the bar.
        'hw AS (SELECT t,w,sum(w) OVER (ORDER BY w,t COLLATE "C") '
        "AS running FROM w WHERE held>0),"
        "b AS (SELECT bar,needed,(SELECT array_agg(t) FROM hw WHERE total>0 "
        "AND least(1,outside+{lw}*(running/total))>=bar) AS kept,"
        "(SELECT array_agg(t) FROM hw WHERE held-w<needed-{lean}) AS required,"
        "(SELECT array_agg(t) FROM hw) AS terms,(SELECT array_agg(w) FROM hw) AS weights,"
        "listed>0 AND least(1,outside+{lw})>=bar{complete} AS admits FROM b1),"
        # 4. The holders, only when the bound admits any: of every required keyword, or of any
        # keyword kept (`holders_statement`).
        "hid AS (SELECT x.id FROM b,LATERAL (SELECT {holders_of_all}(required,terms,weights,"
        "needed) WHERE required IS NOT NULL UNION ALL SELECT {holders}(kept,terms,weights,"
        "needed) WHERE required IS NULL) AS x(id) WHERE admits AND kept IS NOT NULL),"
        "o AS (SELECT id,embedding<=>%(vec)b AS distance,1-(embedding<=>%(vec)b) AS score,"
        "lexical_terms FROM memories WHERE namespace=%(ns)s AND {visible} "
        "AND id=ANY(ARRAY(SELECT id FROM hid))),"
        "h AS (SELECT id,score,fused,raw FROM ({scored_o}) AS s "
        "WHERE fused>=(SELECT bar FROM b) ORDER BY distance,id LIMIT {holder_limit}),"
        # 5. The union, each fact once, and the rows that can be in the answer: the top `limit`
        # and those within the margin of the limit-th, less the sure 1s (capped from at least
        # 1 + the margin: Python scores them 1 too) past the first `limit` of them by id, which
        # is how Python orders equal scores (`rank_by_keywords`).
        "c AS (SELECT id,max(score) AS score,max(fused) AS fused,max(raw) AS raw "
        "FROM (SELECT * FROM vs UNION ALL SELECT * FROM h) AS u "
        "WHERE fused>=%(threshold)s-{margin} GROUP BY id),"
        "top AS (SELECT id,score FROM (SELECT *,row_number() OVER (PARTITION BY raw>=1+{lean} "
        'ORDER BY id COLLATE "C") AS r FROM c) AS c WHERE fused>=coalesce((SELECT fused FROM c '
        "ORDER BY fused DESC OFFSET {kth} LIMIT 1),-2)-{lean} AND (raw<1+{lean} OR r<={limit}))"
        # The facts, then the frequencies, then (a frequency row without a term) how many
        # holders the bound fetched, -1 when it admitted none.
        "SELECT {candidates_no} AS list_no,id,score::float8,lexical_terms,text,is_latest,"
        "is_inference,(is_forgotten OR (expires_at IS NOT NULL AND expires_at<=%(now)s)) "
        "AS is_forgotten,occurred_at,document_id,relations,metadata,source_indexes "
        "FROM top JOIN memories USING (id) WHERE namespace=%(ns)s "
        "UNION ALL SELECT {frequency_no},t,c,{nothing} FROM (SELECT t,c FROM f UNION ALL "
        "SELECT NULL,CASE WHEN (SELECT admits AND kept IS NOT NULL FROM b) "
        "THEN (SELECT count(*) FROM h) ELSE -1 END) AS z"
    ).format(
        frequencies=_frequencies(shape),
        unheld=sql.SQL(repr(UNHELD_WEIGHT)),
        ns=ns,
        visible=_visible(shape),
        depth=sql.Literal(shape.depth),
        scored_v=_scored("v"),
        scored_o=_scored("o", "distance"),
        kth=sql.Literal(shape.limit - 1),
        limit=sql.Literal(shape.limit),
        margin=sql.SQL(repr(_MARGIN)),
        lean=sql.SQL(repr(_TIE + _MARGIN)),
        lw=_LW,
        # An exact vector list shorter than asked holds every visible fact already.
        complete=sql.SQL(" AND listed>={}").format(sql.Literal(shape.depth))
        if exact
        else sql.SQL(""),
        holders_of_all=sql.Identifier(HOLDERS_OF_ALL_FUNCTION),
        holders=sql.Identifier(HOLDERS_FUNCTION),
        holder_limit=sql.Literal(HOLDER_LIMIT),
        candidates_no=sql.Literal(CANDIDATES_LIST_NO),
        frequency_no=sql.Literal(FREQUENCY_LIST_NO),
        nothing=sql.SQL(",".join(["NULL"] * 10)),
    )
    return statement.as_bytes(None)
