"""Search SQL of the pgvector backend: exact per-namespace vector search by default, the partial
HNSW index for namespaces that have one, and hybrid search fusing vector similarity with
PostgreSQL full-text ranking by reciprocal rank fusion (RRF)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
from psycopg import sql

from factledger.adapters.pgvector.filters import compile_filter, metadata_from_json
from factledger.adapters.pgvector.keywords import (
    fused_exact_statement,
    keyword_statements,
    rank_by_keywords,
)
from factledger.application.memory.lexical import query_terms
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    Relation,
    RelationKind,
    SearchHit,
    SearchMode,
    SearchQuery,
)

RRF_K = 60  # the constant of Cormack et al.; damps the weight of the very top ranks
# The HNSW candidate list. 40 (twice the usual vector list) cut the server's CPU per search
# by a fifth but gave recall@3 0.991 against the exact ranking in one of two runs at 10,000
# facts per subject (docs/benchmarks.md): kept at 100.
HNSW_EF_SEARCH = 100


# The columns of every candidate list, in the order `bound_search` returns them.
LIST_COLUMNS = sql.SQL(
    "id, text, is_latest, is_inference, is_forgotten, occurred_at, document_id, relations, "
    "metadata, source_indexes, score::double precision, text_rank::real, lexical_terms"
)

MEMORY_COLUMNS = sql.SQL(
    "id, text, is_latest, is_inference, "
    "(is_forgotten OR (expires_at IS NOT NULL AND expires_at <= %s)) AS is_forgotten, "
    "occurred_at, document_id, relations, metadata, source_indexes, lexical_terms"
)
_CHUNK_COLUMNS = sql.SQL(
    "chunk_id AS id, text, true AS is_latest, false AS is_inference, false AS is_forgotten, "
    "occurred_at, source_id AS document_id, '[]'::jsonb AS relations, metadata, "
    "'{}'::integer[] AS source_indexes, '{}'::text[] AS lexical_terms"
)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """One ranked candidate list to fetch: from which table, ranked how."""

    table: str  # "memories" or "chunks"
    by_text: bool  # full-text ranking instead of vector similarity
    limit: int


# The lexical half of hybrid search matches ANY word of the query, as BM25 does: requiring
# every word (websearch_to_tsquery ANDs them) leaves a long question matching almost nothing
# and cost 0.07 LoCoMo recall@10 (docs/benchmarks.md). plainto_tsquery drops stop words and
# stems; its '&' operators become '|'.
_ANY_WORD_QUERY = sql.SQL("replace(plainto_tsquery('english', %s)::text, ' & ', ' | ')::tsquery")


def ranked_statement(
    namespace: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    plan: SearchPlan,
    *,
    now: datetime,
    ann: bool,
) -> tuple[sql.Composed, list[Any]]:
    """The query for one candidate list (best first) and its arguments.

    Rows carry `score` (cosine similarity, at least the threshold) or, by text, `text_rank`
    (cover-density rank, above zero); the query vector is the only `%b` argument.
    """
    memories = plan.table == "memories"
    visible, params = visibility(query, memories, now)
    where_filter, filter_params = compile_filter(query.filters, sql.SQL("metadata"))
    # A partial HNSW index is only usable when the planner sees the namespace as a constant;
    # the namespace matched NAMESPACE_PATTERN, and RLS still binds the transaction to it.
    ns = sql.Literal(namespace) if ann else sql.Placeholder()
    head: list[Any] = [now] if memories else []
    by_text = plan.by_text
    rank = sql.SQL(", ts_rank_cd(tsv, {}) AS text_rank").format(_ANY_WORD_QUERY)
    match = sql.SQL(" AND tsv @@ {}").format(_ANY_WORD_QUERY)
    base = sql.SQL(
        "SELECT {cols}, 1 - (embedding <=> %b) AS score{rank} FROM {t} "
        "WHERE namespace = {ns} AND {vis} AND {f}{match}"
    ).format(
        cols=MEMORY_COLUMNS if memories else _CHUNK_COLUMNS,
        rank=rank if by_text else sql.SQL(", NULL::real AS text_rank"),
        t=sql.Identifier(plan.table),
        ns=ns,
        vis=visible,
        f=where_filter,
        match=match if by_text else sql.SQL(""),
    )
    args: list[Any] = [*head, vector, *([query.text] if by_text else [])]
    args += [*([] if ann else [namespace]), *params, *filter_params]
    # The limit is a literal: a prepared statement's generic plan (`prepared_search`) would
    # otherwise cost its scan without knowing how few rows it stops after.
    limit = sql.Literal(plan.limit)
    if by_text:
        statement = sql.SQL("{} ORDER BY text_rank DESC, id LIMIT {}").format(base, limit)
        args += [query.text]
    else:
        statement = sql.SQL(
            "SELECT * FROM ({} ORDER BY embedding <=> %b LIMIT {}) AS c "
            "WHERE c.score >= %s ORDER BY c.score DESC, c.id"
        ).format(base, limit)
        args += [vector, query.threshold]
    return statement, args


@dataclass(frozen=True, slots=True)
class SearchLists:
    """The candidate lists of one search, in `list_no` order: (kind, ranked by text). In
    memories mode, the keyword candidates and frequencies (`keywords`) follow them."""

    query: SearchQuery
    depth: int
    lists: tuple[tuple[HitKind, bool], ...]
    terms: tuple[str, ...] = ()


def bounded_search(query: SearchQuery) -> bool:
    """Whether the search's keyword statistics come from the kept counts and its keyword
    candidates are bounded by the ranking. Metadata filters select facts the
    counts cannot tell apart, so a filtered search counts rows, as before."""
    return (
        query.mode is SearchMode.MEMORIES
        and bool(query_terms(query.text, query.asked_about))
        and not query.filters
    )


def search_statement(
    ns: Namespace,
    query: SearchQuery,
    vector: np.ndarray[Any, Any],
    *,
    now: datetime,
    ann: bool,
    depth: int | None = None,
) -> tuple[sql.Composed, list[Any], SearchLists]:
    """Memories or chunks ranked by similarity; hybrid adds the full-text ranking. All the
    candidate lists travel as one statement: a UNION ALL whose rows carry their `list_no`.
    A bounded search (`bounded_search`) is ranked by `fused_search`: here it is its vector
    list alone, at least `depth` deep, for `explain`."""
    tables = {
        SearchMode.MEMORIES: (("memories", HitKind.MEMORY),),
        SearchMode.CHUNKS: (("chunks", HitKind.CHUNK),),
        SearchMode.HYBRID: (("memories", HitKind.MEMORY), ("chunks", HitKind.CHUNK)),
    }[query.mode]
    hybrid = query.mode is SearchMode.HYBRID
    # Memories mode fuses keywords in Python: a fact under the threshold by its vector alone
    # may pass with them, so the vector list is deeper and unfiltered.
    fused = query.mode is SearchMode.MEMORIES
    list_depth = max(query.limit * 4, 20) if hybrid or fused else query.limit
    depth = list_depth if depth is None else max(list_depth, depth)
    terms = query_terms(query.text, query.asked_about) if fused else []
    bounded = bounded_search(query)
    if terms and not ann and not bounded:
        fused_sql, fused_args = fused_exact_statement(
            ns,
            query,
            vector,
            columns=MEMORY_COLUMNS,
            list_columns=LIST_COLUMNS,
            visible=visibility(query, True, now),
            now=now,
            depth=depth,
            terms=terms,
        )
        lists_sent = SearchLists(query, depth, ((HitKind.MEMORY, False),), tuple(terms))
        return fused_sql, fused_args, lists_sent
    vector_query = replace(query, threshold=-1.0) if fused else query
    parts: list[sql.Composable] = []
    args: list[Any] = []
    lists: list[tuple[HitKind, bool]] = []
    for table, kind in tables:
        use_ann = ann and table == "memories"
        for text_ranked in (False, True) if hybrid else (False,):
            plan = SearchPlan(table, by_text=text_ranked, limit=depth)
            statement, part_args = ranked_statement(
                ns, vector_query, vector, plan, now=now, ann=use_ann
            )
            parts.append(numbered(len(parts), statement))
            args += part_args
            lists.append((kind, text_ranked))
    if terms and not bounded:  # filtered, indexed: its vector list must stay an index scan
        visible = visibility(query, True, now)
        for statement, part_args in keyword_statements(
            ns,
            query,
            vector,
            columns=MEMORY_COLUMNS,
            visible=visible,
            now=now,
            depth=depth,
            terms=terms,
        ):
            parts.append(numbered(len(parts), statement))
            args += part_args
    searched = SearchLists(query, depth, tuple(lists), tuple(terms))
    return sql.SQL(" UNION ALL ").join(parts), args, searched


def numbered(list_no: int, statement: sql.Composable) -> sql.Composed:
    return sql.SQL("(SELECT {n} AS list_no, {cols} FROM ({s}) AS l)").format(
        n=sql.Literal(list_no), cols=LIST_COLUMNS, s=statement
    )


def rank_rows(lists: SearchLists, rows: list[dict[str, Any]]) -> list[SearchHit]:
    """Ranks the rows of `search_statement`; hybrid fuses the lists by reciprocal rank."""
    grouped: list[list[dict[str, Any]]] = [[] for _ in range(len(lists.lists) + 2)]
    for row in rows:
        kind = (
            HitKind.MEMORY if row["list_no"] >= len(lists.lists) else lists.lists[row["list_no"]][0]
        )
        grouped[row["list_no"]].append({**row, "kind": kind})
    keyword_candidates, frequencies = grouped[len(lists.lists) :]
    grouped = grouped[: len(lists.lists)]
    by_vector = [g for g, (_, by_text) in zip(grouped, lists.lists, strict=True) if not by_text]
    by_text = [g for g, (_, text) in zip(grouped, lists.lists, strict=True) if text]
    semantic = merge(by_vector, "score")[: lists.depth]
    if lists.query.mode is SearchMode.MEMORIES:
        candidates = semantic + keyword_candidates
        ranked = rank_by_keywords(lists.query, list(lists.terms), candidates, frequencies)
        return [to_hit(r, HitKind.MEMORY, score) for r, score in ranked]
    if lists.query.mode is not SearchMode.HYBRID:
        return [to_hit(r, r["kind"], min(1.0, r["score"])) for r in semantic]
    # What passes the similarity threshold or matches a keyword is admitted; RRF orders
    # the union (a full-text hit catches names and codes the embedding blurs).
    keyword = merge(by_text, "text_rank")[: lists.depth]
    fused = fuse([semantic, keyword], lists.query.limit)
    return [to_hit(r, r["kind"], score) for r, score in fused]


def visibility(
    query: SearchQuery, memories: bool, now: datetime
) -> tuple[sql.Composable, list[Any]]:
    if not memories:
        return sql.SQL("TRUE"), []
    parts: list[sql.Composable] = [sql.SQL("TRUE")]
    params: list[Any] = []
    if not query.include_inferred:
        parts.append(sql.SQL("NOT is_inference"))
    if not query.include_superseded:
        parts.append(sql.SQL("is_latest"))
    if not query.include_forgotten:
        parts.append(sql.SQL("NOT is_forgotten AND (expires_at IS NULL OR expires_at > %s)"))
        params.append(now)
    return sql.SQL(" AND ").join(parts), params


def merge(lists: list[list[dict[str, Any]]], key: str) -> list[dict[str, Any]]:
    """Merges per-table candidate lists into one ranking by `key`, best first."""
    rows = [row for rows in lists for row in rows]
    return sorted(rows, key=lambda r: (-r[key], r["kind"], r["id"]))


def fuse(lists: list[list[dict[str, Any]]], limit: int) -> list[tuple[dict[str, Any], float]]:
    """Reciprocal rank fusion; the fused score is scaled so that ranking first in every list
    scores 1.0, and hits come back best first."""
    fused: dict[tuple[str, str], float] = {}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for candidates in lists:
        for rank, row in enumerate(candidates, start=1):
            key = (row["kind"], row["id"])
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank)
            rows.setdefault(key, row)
    best = len(lists) / (RRF_K + 1)
    order = sorted(fused, key=lambda k: (-fused[k], k))
    return [(rows[k], min(1.0, fused[k] / best)) for k in order[:limit]]


def to_hit(row: dict[str, Any], kind: HitKind, score: float) -> SearchHit:
    return SearchHit(
        id=row["id"],
        text=row["text"],
        score=float(score),
        kind=kind,
        is_latest=row["is_latest"],
        is_inference=row["is_inference"],
        occurred_at=row["occurred_at"],
        document_id=row["document_id"],
        relations=relations_from_json(parsed_json(row["relations"])),
        is_forgotten=row["is_forgotten"],
        metadata=metadata_from_json(parsed_json(row["metadata"])),
        source_indexes=tuple(row["source_indexes"]),
    )


def parsed_json(raw: Any) -> Any:
    """A jsonb column of a search row: its text (`JSONB_AS_TEXT`, parsed only for the hits
    returned) or, from another reader, already parsed."""
    return json.loads(raw) if isinstance(raw, str) else raw


def relations_from_json(raw: list[dict[str, str]]) -> tuple[Relation, ...]:
    return tuple(Relation(RelationKind(r["kind"]), r["memory_id"]) for r in raw)
