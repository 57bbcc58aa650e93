"""Memories-mode keywords from the kept counts, with keyword candidates bounded by the
ranking itself (migration 7, ADR 0030).

Reading every row of a large namespace for the keyword lists cost 40-50 ms at 10,000 facts.
Here a search reads O(candidates):

1. one statement: the vector list (the partial HNSW index or the exact scan, as before) and
   the keyword frequencies summed from `memory_terms` over the visibility classes the query
   admits, less the facts whose expiry passed unflagged (a partial index finds them);
2. in Python, with the functions that score (`application.memory.lexical`): the limit-th best
   fused score of the vector list is the bar, and the vector list's lowest cosine bounds the
   cosine of any fact outside it. Keywords are dropped lightest first while a fact holding
   every dropped keyword and nothing else could not reach the bar; only holders of the
   keywords left can enter the top. A second statement fetches those (through the GIN index)
   whose held weight could lift the bounding cosine to the bar; when some keywords are
   required (the others' weight together falls short), it looks up the facts holding every
   one of them (ADR 0045; ADR 0041 looked up the rarest). Of those, only the ones whose fused
   score reaches the bar come back (ADR 0045). The ranking is the
   exhaustive one over the vector list and those holders: exact wherever the vector list is
   (the ANN index's own approximation stays).

`fused_search` (ADR 0050) runs the same steps as CTEs of one statement, the default; this
module's Python bound and second statement serve `PgvectorSearcher.fused_in_sql` False (the
bench's "two statements" turn).

The bound relies on the score growing with the cosine and with the (additive) weight of the
keywords held (`fused_score`, `coverage`); `tests/integration/test_pgvector_keyword_bound.py`
checks the result against the exhaustive scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from psycopg import sql

from factledger.adapters.pgvector.keywords import terms_argument
from factledger.adapters.pgvector.term_stats import HOLDERS_FUNCTION, HOLDERS_OF_ALL_FUNCTION
from factledger.application.memory.lexical import LEXICAL_WEIGHT, coverage, fused_score, idf_weights
from factledger.application.memory.types import Namespace, SearchQuery

# Holders fetched at most: past it the nearest by vector are kept (a query whose every keyword
# is common and whose bar is low); the bench reports how often it is reached.
HOLDER_LIMIT = 500
_TIE = 1e-9  # float8 in PostgreSQL against float arithmetic here: never drop a tie


@dataclass(slots=True)
class BoundedSearchCounts:
    """How bounded searches went in this process (the bench prints them)."""

    searches: int = 0  # bounded searches
    second_statements: int = 0  # those that fetched keyword holders
    holders: int = 0  # holders fetched in all
    at_limit: int = 0  # statements that returned `HOLDER_LIMIT` holders (maybe more existed)


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


@dataclass(frozen=True, slots=True)
class HolderBound:
    """What step two fetches: holders of `lookup` (of every one of them when `every`, of any
    otherwise), kept when the weight they hold of `terms` reaches `needed` (the least a fact
    outside the vector list must hold to reach the bar) and their fused score reaches `bar`
    (`total` is the weight of every query keyword, held or not: coverage's denominator)."""

    lookup: tuple[str, ...]
    terms: tuple[str, ...]
    weights: tuple[float, ...]
    needed: float
    every: bool = False
    bar: float = -1.0
    total: float = 1.0


def holder_bound(
    query: SearchQuery,
    terms: list[str],
    vector_rows: list[dict[str, Any]],
    frequencies: list[dict[str, Any]],
) -> HolderBound | None:
    """Which holders may still enter the top `limit` (see the module's doc); None: none."""
    if not vector_rows or not terms:
        return None
    frequency = {row["id"]: int(row["score"]) for row in frequencies}
    searched = frequency.pop("", 0)
    weights = idf_weights(terms, frequency, searched)
    # A keyword no searched fact holds weighs the most and lifts nobody: never fetched, and
    # never counted in what a fact outside the vector list could hold.
    held = [(w, t) for w, t in zip(weights, terms, strict=True) if frequency.get(t, 0) > 0]
    scores = sorted(
        (
            fused_score(min(1.0, r["score"]), coverage(terms, weights, set(r["lexical_terms"])))
            for r in vector_rows
        ),
        reverse=True,
    )
    kth = scores[query.limit - 1] if len(scores) >= query.limit else -1.0
    bar = max(query.threshold, kth) - _TIE
    outside = min(1.0, min(r["score"] for r in vector_rows))
    if fused_score(outside, 1.0) < bar:
        return None
    dropped: set[str] = set()
    for _, term in sorted(held):
        if fused_score(outside, coverage(terms, weights, dropped | {term})) >= bar:
            break
        dropped.add(term)
    lookup = tuple(t for _, t in held if t not in dropped)
    if not lookup:
        return None
    total = sum(weights)
    needed = _least_coverage(outside, bar) * total
    required = _required(held, needed)
    # Every holder that can reach the bar holds all the required keywords: the GIN index
    # intersects their postings instead of reading the rarest one's (ADR 0045).
    every = bool(required)
    if every:
        lookup = tuple(sorted(required, key=lambda t: (frequency[t], t)))
    return HolderBound(
        lookup,
        tuple(t for _, t in held),
        tuple(w for w, _ in held),
        needed,
        every=every,
        bar=bar,
        total=total,
    )


def _required(held: list[tuple[float, str]], needed: float) -> list[str]:
    """The held keywords without which the others' weight falls short of `needed` (ADR 0041).

    Every holder that can reach the bar holds each of them, so the GIN look-up intersects their
    postings (`@>`, ADR 0045) instead of reading the union of the common keywords' (1-5 ms
    for the bench's template words); those short of `needed` are dropped by it as before."""
    total = sum(w for w, _ in held)
    return [t for w, t in held if total - w < needed - _TIE]


def _least_coverage(cosine: float, bar: float) -> float:
    """The least coverage that lifts `cosine` to `bar`, from below (bisection on the score,
    which grows with coverage; 40 halvings leave 1e-12 of slack, taken off to stay safe)."""
    low, high = 0.0, 1.0
    for _ in range(40):
        middle = (low + high) / 2
        if fused_score(cosine, middle) >= bar:
            high = middle
        else:
            low = middle
    return max(0.0, low - _TIE)


def holders_statement(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    *,
    columns: sql.Composable,
    visible: tuple[sql.Composable, list[Any]],
    now: datetime,
    bound: HolderBound,
) -> tuple[sql.Composed, list[Any]]:
    """The visible holders that may reach the bar, nearest first, at most `HOLDER_LIMIT`.

    The weight a fact holds is summed as `coverage` sums it (a share of additive weights),
    so a holder that cannot reach the bar never leaves the server: short of `needed` it is
    dropped by the look-up, and with its cosine short of the bar by the fused score here
    (`fused_score`'s form; the ranking scores the rows again in Python, `_TIE` keeps ties)."""
    where_visible, visible_params = visible
    function = sql.Identifier(HOLDERS_OF_ALL_FUNCTION if bound.every else HOLDERS_FUNCTION)
    terms = sql.SQL("string_to_array(%s, ' ')")
    statement = sql.SQL(
        "SELECT {cols}, 1 - (embedding <=> %b) AS score, NULL::real AS text_rank FROM memories "
        "WHERE namespace = %s AND {vis} "
        "AND id = ANY(ARRAY(SELECT {fn}({terms}, {terms}, {terms}::double precision[], %s))) "
        "AND least(1.0, least(1.0, 1 - (embedding <=> %b)) + %s * (SELECT coalesce(sum(q.w), 0) "
        "FROM unnest({terms}, {terms}::double precision[]) AS q(t, w) "
        "WHERE q.t = ANY(lexical_terms))) >= %s "
        "ORDER BY embedding <=> %b, id LIMIT {limit}"
    ).format(
        cols=columns,
        vis=where_visible,
        fn=function,
        terms=terms,
        limit=sql.Literal(HOLDER_LIMIT),
    )
    weights = " ".join(repr(w) for w in bound.weights)
    args = [
        now,
        vector,
        ns,
        *visible_params,
        " ".join(bound.lookup),
        " ".join(bound.terms),
        weights,
        bound.needed,
        vector,
        LEXICAL_WEIGHT / bound.total if bound.total > 0 else 0.0,
        " ".join(bound.terms),
        weights,
        bound.bar,
        vector,
    ]
    return statement, args
