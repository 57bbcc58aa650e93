"""Approximate indexes for large namespaces: one partial HNSW index per namespace.

- Exact search through the `(namespace, ...)` btree is the default: perfect recall, and fast
  up to a few thousand facts; its cost grows linearly with the namespace (docs/benchmarks.md).
- `maintain_ann_indexes` (an operator call, run as the owner) gives each namespace past
  `min_facts` (default 5,000) its own
  `CREATE INDEX CONCURRENTLY ... USING hnsw ... WHERE namespace = '<ns>'`.
  Other namespaces are untouched: their inserts only evaluate the index predicate, and their
  searches never see the index (the planner can only prove the predicate for that namespace).
- The backend learns from `ann_indexes` which namespaces have one and then writes that
  namespace as a literal into its search SQL, so the planner can match the partial index.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import psycopg
import structlog
from psycopg import sql

from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.application.memory.rules import validate_namespace

log = structlog.get_logger(__name__)
# Where exact search starts to cost more than an index is worth (docs/benchmarks.md).
DEFAULT_MIN_FACTS = 5_000
INDEX_PREFIX = "memories_ann_"


@dataclass(frozen=True, slots=True)
class AnnSettings:
    min_facts: int = DEFAULT_MIN_FACTS
    drop_below: int | None = None  # default: half of min_facts, so a namespace does not flap
    m: int = 16
    ef_construction: int = 64
    maintenance_work_mem: str = "256MB"


@dataclass(slots=True)
class AnnReport:
    created: dict[str, float] = field(default_factory=dict)  # namespace -> build seconds
    dropped: list[str] = field(default_factory=list)
    busy: bool = False  # another process was maintaining the same schema; nothing was done


def index_name(namespace: str) -> str:
    return INDEX_PREFIX + hashlib.sha256(namespace.encode()).hexdigest()[:20]


async def maintain_ann_indexes(
    config: PgvectorConfig, settings: AnnSettings | None = None
) -> AnnReport:
    """Creates the missing partial HNSW indexes and drops those of shrunken namespaces."""
    s = settings or AnnSettings()
    drop_below = s.drop_below if s.drop_below is not None else s.min_facts // 2
    report = AnnReport()
    # CREATE/DROP INDEX CONCURRENTLY cannot run inside a transaction block.
    async with await psycopg.AsyncConnection.connect(
        config.admin_conninfo, autocommit=True
    ) as conn:
        # Workers run this on a timer: one at a time per schema, the others skip the round.
        lock = await conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [f"{config.schema}.ann"]
        )
        locked = await lock.fetchone()
        if locked is None or not locked[0]:
            report.busy = True
            log.info("pgvector.ann_maintenance_busy")
            return report
        await conn.execute(
            sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(s.maintenance_work_mem))
        )
        counts = await _fact_counts(conn, config.schema)
        existing = await _existing(conn, config.schema)
        for namespace, facts in counts.items():
            if facts >= s.min_facts and namespace not in existing:
                report.created[namespace] = await _create(conn, config.schema, namespace, facts, s)
        for namespace, name in existing.items():
            if counts.get(namespace, 0) < drop_below:
                await _drop(conn, config.schema, namespace, name)
                report.dropped.append(namespace)
        await _drop_orphans(conn, config.schema)
    log.info("pgvector.ann_maintained", created=len(report.created), dropped=len(report.dropped))
    return report


async def _fact_counts(conn: psycopg.AsyncConnection[Any], schema: str) -> dict[str, int]:
    # The owner is not subject to RLS: this is the one cross-namespace read, and it reads counts.
    cur = await conn.execute(
        sql.SQL("SELECT namespace, count(*) FROM {} GROUP BY namespace").format(
            sql.Identifier(schema, "memories")
        )
    )
    return {row[0]: row[1] for row in await cur.fetchall()}


async def _existing(conn: psycopg.AsyncConnection[Any], schema: str) -> dict[str, str]:
    cur = await conn.execute(
        sql.SQL("SELECT namespace, index_name FROM {}").format(
            sql.Identifier(schema, "ann_indexes")
        )
    )
    return {row[0]: row[1] for row in await cur.fetchall()}


async def _create(
    conn: psycopg.AsyncConnection[Any],
    schema: str,
    namespace: str,
    facts: int,
    s: AnnSettings,
) -> float:
    validate_namespace(namespace)  # it becomes a literal in the index predicate
    name = index_name(namespace)
    await _drop_if_invalid(conn, schema, name)
    started = time.perf_counter()
    await conn.execute(
        sql.SQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} "
            "USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef}) "
            "WHERE namespace = {ns}"
        ).format(
            name=sql.Identifier(name),
            table=sql.Identifier(schema, "memories"),
            m=sql.Literal(s.m),
            ef=sql.Literal(s.ef_construction),
            ns=sql.Literal(namespace),
        )
    )
    seconds = time.perf_counter() - started
    await conn.execute(
        sql.SQL(
            "INSERT INTO {} (namespace, index_name, facts_at_build) VALUES (%s, %s, %s) "
            "ON CONFLICT (namespace) DO NOTHING"
        ).format(sql.Identifier(schema, "ann_indexes")),
        [namespace, name, facts],
    )
    log.info("pgvector.ann_index_built", facts=facts, seconds=round(seconds, 2))
    return seconds


async def _drop_if_invalid(conn: psycopg.AsyncConnection[Any], schema: str, name: str) -> None:
    """A build that was cut short (a worker stopped, a crash) leaves an invalid index, which
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS` would keep forever."""
    cur = await conn.execute(
        "SELECT NOT i.indisvalid FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s",
        [schema, name],
    )
    row = await cur.fetchone()
    if row is not None and row[0]:
        log.warning("pgvector.ann_index_invalid_dropped")
        await conn.execute(
            sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
        )


async def _drop(conn: psycopg.AsyncConnection[Any], schema: str, namespace: str, name: str) -> None:
    await conn.execute(
        sql.SQL("DELETE FROM {} WHERE namespace = %s").format(
            sql.Identifier(schema, "ann_indexes")
        ),
        [namespace],
    )
    await conn.execute(
        sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
    )


async def _drop_orphans(conn: psycopg.AsyncConnection[Any], schema: str) -> None:
    """Indexes left by a dropped namespace (the app role cannot drop indexes itself)."""
    cur = await conn.execute(
        sql.SQL(
            "SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = %s "
            "AND i.indexname LIKE %s AND NOT EXISTS "
            "(SELECT 1 FROM {} a WHERE a.index_name = i.indexname)"
        ).format(sql.Identifier(schema, "ann_indexes")),
        [schema, INDEX_PREFIX + "%"],
    )
    for (name,) in await cur.fetchall():
        await conn.execute(
            sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
        )
