"""Schema of the pgvector memory backend: versioned migrations applied at start-up.

- Migrations run as the owner role, inside one transaction holding an advisory lock, so several
  processes starting at once apply each version exactly once.
- Every table carries `namespace` and has Row-Level Security bound to
  `current_setting('app.namespace')`; the application role gets DML grants only, so it neither
  owns the tables nor bypasses the policies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from factledger.adapters.pgvector.bound_search import (
    bound_search_migration,
    lexical_terms_migration,
)
from factledger.adapters.pgvector.mirror.schema import mirror_versions_migration
from factledger.adapters.pgvector.slot_terms import slot_terms_migration
from factledger.adapters.pgvector.term_stats import (
    holders_of_all_migration,
    namespaced_terms_migration,
    term_statistics_migration,
)

MIGRATION_LOCK_KEY = 7_406_411_230_001  # arbitrary, fixed: one lock id for our migrations
NAMESPACED_TABLES = ("memories", "documents", "records", "chunks", "ann_indexes")


@dataclass(frozen=True, slots=True)
class SchemaOptions:
    """What the migrations are parametrised by; identifiers are quoted by psycopg."""

    schema: str
    app_role: str
    dimension: int
    create_app_role: bool = False


Statement = sql.SQL | sql.Composed
Migration = Callable[[SchemaOptions], list[Statement]]


def _v1_tables(o: SchemaOptions) -> list[Statement]:
    s = sql.Identifier(o.schema)
    dim = sql.Literal(o.dimension)
    return [
        sql.SQL("CREATE EXTENSION IF NOT EXISTS vector"),
        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(s),
        sql.SQL(
            "CREATE TABLE {}.store_settings (key text PRIMARY KEY, value text NOT NULL)"
        ).format(s),
        sql.SQL("INSERT INTO {}.store_settings VALUES ('dimension', {})").format(
            s, sql.Literal(str(o.dimension))
        ),
        sql.SQL(
            """CREATE TABLE {s}.memories (
            namespace text NOT NULL,
            id text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            text text NOT NULL,
            slot text,
            is_latest boolean NOT NULL DEFAULT true,
            is_inference boolean NOT NULL DEFAULT false,
            is_forgotten boolean NOT NULL DEFAULT false,
            forget_reason text,
            occurred_at timestamptz,
            valid_from timestamptz,
            document_id text,
            version integer NOT NULL DEFAULT 1,
            relations jsonb NOT NULL DEFAULT '[]',
            condition text,
            expires_at timestamptz,
            source_indexes integer[] NOT NULL DEFAULT '{{}}',
            metadata jsonb NOT NULL DEFAULT '{{}}',
            embedding vector({dim}) NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
            PRIMARY KEY (namespace, id))"""
        ).format(s=s, dim=dim),
        # The btree that exact per-namespace search walks; seq keeps listing order.
        sql.SQL("CREATE INDEX memories_namespace_seq ON {}.memories (namespace, seq)").format(s),
        sql.SQL(
            "CREATE INDEX memories_namespace_slot ON {}.memories (namespace, slot) WHERE is_latest"
        ).format(s),
        sql.SQL(
            """CREATE TABLE {s}.documents (
            namespace text NOT NULL,
            document_id text NOT NULL,
            state text NOT NULL,
            mode text NOT NULL,
            facts integer NOT NULL DEFAULT 0,
            error_type text,
            transcript jsonb NOT NULL,
            occurred_at timestamptz NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            claimed_at timestamptz,
            PRIMARY KEY (namespace, document_id))"""
        ).format(s=s),
        sql.SQL(
            "CREATE INDEX documents_pending ON {}.documents (queued_at) "
            "WHERE state IN ('queued', 'extracting')"
        ).format(s),
        sql.SQL(
            """CREATE TABLE {s}.records (
            namespace text NOT NULL,
            record_id text NOT NULL,
            kind text NOT NULL,
            body_json text NOT NULL,
            body jsonb NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            PRIMARY KEY (namespace, record_id))"""
        ).format(s=s),
        sql.SQL(
            """CREATE TABLE {s}.chunks (
            namespace text NOT NULL,
            chunk_id text NOT NULL,
            source_id text NOT NULL,
            chunk_index integer NOT NULL,
            text text NOT NULL,
            occurred_at timestamptz,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            embedding vector({dim}) NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
            PRIMARY KEY (namespace, chunk_id))"""
        ).format(s=s, dim=dim),
        sql.SQL(
            """CREATE TABLE {s}.ann_indexes (
            namespace text PRIMARY KEY,
            index_name text NOT NULL UNIQUE,
            facts_at_build integer NOT NULL,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp())"""
        ).format(s=s),
    ]


def _v1_isolation(o: SchemaOptions) -> list[Statement]:
    s, role = sql.Identifier(o.schema), sql.Identifier(o.app_role)
    statements: list[Statement] = []
    if o.create_app_role:
        # Roles are cluster-wide: two databases migrating at once may race on the same name.
        statements.append(
            sql.SQL(
                "DO $$ BEGIN CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE; "
                "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
            ).format(role)
        )
    statements.append(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, role))
    for table in NAMESPACED_TABLES:
        t = sql.Identifier(o.schema, table)
        statements += [
            sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(t),
            sql.SQL(
                "CREATE POLICY namespace_isolation ON {} "
                "USING (namespace = current_setting('app.namespace', true)) "
                "WITH CHECK (namespace = current_setting('app.namespace', true))"
            ).format(t),
            sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(t, role),
        ]
    statements.append(
        sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(o.schema, "store_settings"), role)
    )
    statements.append(_claim_function(o))
    return statements


def _claim_function(o: SchemaOptions, *, replace: bool = False) -> sql.Composed:
    # The batched-ingest worker must find queued documents of every namespace. Rather than
    # loosening a policy, one owner-run function hands out ids only (never content) and marks
    # the document as claimed; the worker then reads it in a transaction bound to its namespace.
    s, role = sql.Identifier(o.schema), sql.Identifier(o.app_role)
    fn = sql.Identifier(o.schema, "claim_queued_document")
    return sql.SQL(
        """CREATE {replace} FUNCTION {fn}(stale_after interval)
        RETURNS TABLE (namespace text, document_id text)
        LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
          UPDATE {s}.documents AS d SET state = 'extracting', claimed_at = clock_timestamp()
          WHERE (d.namespace, d.document_id) = (
            SELECT q.namespace, q.document_id FROM {s}.documents AS q
            WHERE q.state IN ('queued', 'extracting', 'indexing')
              AND (q.state = 'queued' OR q.claimed_at < clock_timestamp() - stale_after)
            ORDER BY q.queued_at FOR UPDATE SKIP LOCKED LIMIT 1)
          RETURNING d.namespace, d.document_id
        $$;
        REVOKE ALL ON FUNCTION {fn}(interval) FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION {fn}(interval) TO {role}"""
    ).format(fn=fn, s=s, role=role, replace=sql.SQL("OR REPLACE" if replace else ""))


def _v3_ann_lookup(o: SchemaOptions) -> list[Statement]:
    # Searches must know whether their namespace has a partial HNSW index before they write
    # their SQL. One owner-run function lists those namespaces (names only) for the whole
    # process, instead of one bound lookup per namespace.
    fn, role = sql.Identifier(o.schema, "ann_namespaces"), sql.Identifier(o.app_role)
    table = sql.Identifier(o.schema, "ann_indexes")
    return [
        sql.SQL(
            "CREATE FUNCTION {fn}() RETURNS SETOF text LANGUAGE sql STABLE SECURITY DEFINER "
            "SET search_path = pg_catalog, pg_temp AS $$ SELECT namespace FROM {t} $$"
        ).format(fn=fn, t=table),
        sql.SQL("REVOKE ALL ON FUNCTION {}() FROM PUBLIC").format(fn),
        sql.SQL("GRANT EXECUTE ON FUNCTION {}() TO {}").format(fn, role),
    ]


def _v4_reclaim_indexing(o: SchemaOptions) -> list[Statement]:
    # A worker stopped during `indexing` left its document there; claims of documents stuck in
    # either in-flight state are taken over once stale. The partial index follows the query.
    s = sql.Identifier(o.schema)
    return [
        sql.SQL("DROP INDEX {}").format(sql.Identifier(o.schema, "documents_pending")),
        sql.SQL(
            "CREATE INDEX documents_pending ON {}.documents (queued_at) "
            "WHERE state IN ('queued', 'extracting', 'indexing')"
        ).format(s),
        _claim_function(o, replace=True),
    ]


MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "tables", _v1_tables),
    (2, "isolation", _v1_isolation),
    (3, "ann lookup", _v3_ann_lookup),
    (4, "reclaim indexing", _v4_reclaim_indexing),
    (5, "bound search", bound_search_migration),
    (6, "lexical terms", lexical_terms_migration),
    (7, "term statistics", term_statistics_migration),
    (8, "slot terms", slot_terms_migration),
    (9, "holders of all keywords", holders_of_all_migration),
    (10, "namespaced keyword index", namespaced_terms_migration),
    (11, "mirror versions", mirror_versions_migration),
)


async def apply_migrations(conninfo: str, options: SchemaOptions) -> list[int]:
    """Applies the missing migrations as the owner; returns the versions applied by this call."""
    applied: list[int] = []
    async with await psycopg.AsyncConnection.connect(conninfo) as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK_KEY])
        s = sql.Identifier(options.schema)
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(s))
        await conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.schema_migrations (version integer PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())"
            ).format(s)
        )
        cur = await conn.execute(sql.SQL("SELECT version FROM {}.schema_migrations").format(s))
        done = {row[0] for row in await cur.fetchall()}
        for version, name, migration in MIGRATIONS:
            if version in done:
                continue
            for statement in migration(options):
                await conn.execute(statement)
            await conn.execute(
                sql.SQL("INSERT INTO {}.schema_migrations (version, name) VALUES (%s, %s)").format(
                    s
                ),
                [version, name],
            )
            applied.append(version)
    return applied
