"""Keyword statistics kept per namespace, so memories-mode search reads O(candidates) rows
(migration 7).

- `memory_terms` holds, per namespace, keyword and visibility class (`is_inference`,
  `is_latest`, `is_forgotten`), how many facts hold the keyword; the empty keyword counts the
  facts themselves. A search sums the classes its flags admit instead of reading every row.
- Statement-level triggers on `memories` keep it exact for every writer (ingest, the batched
  worker, forgetting, dropping a namespace, the bulk COPY): each statement adds its new rows'
  keywords and subtracts its old rows', grouped, in key order. A count that reaches zero is
  deleted at once, so a forgotten fact's words do not outlive it here.
- A TRUNCATE of `memories` empties the counts too (a trigger of its own: TRUNCATE fires no
  row or transition-table triggers).
- Writers of one namespace already hold its advisory lock (`connection.bound(lock=True)`),
  which serialises their updates of the namespace's counts; the upserts go in key order so two
  statements never wait on each other's rows in opposite orders.
- The triggers run as the owner (`SECURITY DEFINER`): the application role may read the
  counts of its bound namespace (row-level security) but never write them.
- A GIN index on `lexical_terms` finds the holders of a keyword, through an owner-run function
  that returns the bound namespace's ids only (`&&` is not leakproof, so RLS keeps the
  application role's own lookups off the index); a partial index finds the
  facts whose expiry passed but that are not flagged forgotten, which the counts still show
  as visible and a search subtracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

if TYPE_CHECKING:  # schema lists this module's migration
    from factledger.adapters.pgvector.schema import SchemaOptions, Statement

TERMS_TABLE = "memory_terms"
HOLDERS_FUNCTION = "keyword_holders"
# The holders of every keyword of a list (migration 9): the GIN index intersects their
# postings, so a search needing several keywords reads only facts holding all of them, where
# `keyword_holders` reads the union of one keyword list's.
HOLDERS_OF_ALL_FUNCTION = "keyword_holders_of_all"
# A fact's keywords prefixed by its namespace (migration 10): the key of the GIN
# index the holder lookups use.
NAMESPACED_TERMS_FUNCTION = "namespaced_terms"
_KEY = "namespace, term, is_inference, is_latest, is_forgotten"


def _delta_of(rows: sql.Composable, sign: int) -> sql.Composed:
    # One row per fact and keyword (the empty keyword counts the fact); DISTINCT guards
    # against a keyword listed twice in one fact.
    return sql.SQL(
        "SELECT DISTINCT r.namespace, r.id, r.is_inference, r.is_latest, r.is_forgotten, "
        "x.term, {sign} AS d FROM {rows} AS r "
        "CROSS JOIN LATERAL unnest(array_append(r.lexical_terms, '')) AS x(term)"
    ).format(sign=sql.Literal(sign), rows=rows)


_NEW, _OLD = sql.Identifier("new_rows"), sql.Identifier("old_rows")


def _apply_delta(terms: sql.Composable, sides: list[sql.Composed]) -> sql.Composed:
    """The plpgsql that adds the grouped delta of `sides` and deletes the counts it zeroed."""
    return sql.SQL(
        "WITH delta AS (SELECT {key}, sum(d) AS d FROM ({union}) AS s "
        "GROUP BY {key} HAVING sum(d) <> 0), "
        "up AS (INSERT INTO {terms} AS t ({key}, facts) SELECT {key}, d FROM delta "
        "ORDER BY {key} ON CONFLICT ({key}) DO UPDATE SET facts = t.facts + excluded.facts "
        "RETURNING t.namespace, t.term, t.is_inference, t.is_latest, t.is_forgotten, t.facts) "
        "SELECT array_agg(namespace), array_agg(term), array_agg(is_inference), "
        "array_agg(is_latest), array_agg(is_forgotten) INTO z_ns, z_term, z_inf, z_lat, z_forg "
        "FROM up WHERE facts = 0;\n"
        "    IF z_ns IS NOT NULL THEN\n"
        "      DELETE FROM {terms} AS t USING unnest(z_ns, z_term, z_inf, z_lat, z_forg) "
        "AS z(namespace, term, i, l, f) WHERE t.namespace = z.namespace AND t.term = z.term "
        "AND t.is_inference = z.i AND t.is_latest = z.l AND t.is_forgotten = z.f "
        "AND t.facts = 0;\n"
        "    END IF;\n"
    ).format(key=sql.SQL(_KEY), terms=terms, union=sql.SQL(" UNION ALL ").join(sides))


def _trigger_function(o: SchemaOptions) -> sql.Composed:
    terms = sql.Identifier(o.schema, TERMS_TABLE)
    fn = sql.Identifier(o.schema, "count_memory_terms")
    # plpgsql plans each statement when it first runs, so a branch naming a transition table
    # that this trigger does not have is never planned.
    return sql.SQL(
        "CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
        "SET search_path = pg_catalog, pg_temp AS $$\n"
        "DECLARE z_ns text[]; z_term text[]; z_inf boolean[]; z_lat boolean[]; "
        "z_forg boolean[];\n"
        "BEGIN\n"
        "  IF TG_OP = 'INSERT' THEN\n    {insert}"
        "  ELSIF TG_OP = 'DELETE' THEN\n    {delete}"
        "  ELSE\n    {update}"
        "  END IF;\n"
        "  RETURN NULL;\n"
        "END $$"
    ).format(
        fn=fn,
        insert=_apply_delta(terms, [_delta_of(_NEW, 1)]),
        delete=_apply_delta(terms, [_delta_of(_OLD, -1)]),
        update=_apply_delta(terms, [_delta_of(_NEW, 1), _delta_of(_OLD, -1)]),
    )


def _holders_function(
    o: SchemaOptions,
    name: str = HOLDERS_FUNCTION,
    operator: str = "&&",
    *,
    namespaced: bool = False,
) -> list[Statement]:
    # `&&` on arrays is not leakproof, so under row-level security PostgreSQL must not use it
    # as an index condition: the application role's lookup read every row of the namespace.
    # This owner-run function applies the policy's own condition itself and returns ids only
    # (the caller then reads the rows under RLS by primary key), like `claim_queued_document`.
    # The holders come back only when the weight they hold of `p_terms` reaches `p_needed`:
    # the index's recheck reads their keywords anyway, and most holders fall short.
    # `namespaced` (migration 10): the lookup goes through the namespace's own keys of
    # `memories_namespaced_terms` instead of every namespace's postings of the keywords.
    fn = sql.Identifier(o.schema, name)
    signature = sql.SQL("(text[], text[], double precision[], double precision)")
    lookup = (
        sql.SQL(
            "{nt}(m.namespace, m.lexical_terms) {op} "
            "{nt}(current_setting('app.namespace', true), p_lookup)"
        ).format(nt=sql.Identifier(o.schema, NAMESPACED_TERMS_FUNCTION), op=sql.SQL(operator))
        if namespaced
        else sql.SQL("m.lexical_terms {op} p_lookup").format(op=sql.SQL(operator))
    )
    return [
        sql.SQL(
            "CREATE OR REPLACE FUNCTION {fn}(p_lookup text[], p_terms text[], "
            "p_weights double precision[], "
            "p_needed double precision) RETURNS SETOF text LANGUAGE sql STABLE "
            "SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ "
            "SELECT m.id FROM {m} AS m "
            "WHERE {namespace} = current_setting('app.namespace', true) "
            "AND {lookup} AND (SELECT coalesce(sum(q.w), 0) "
            "FROM unnest(p_terms, p_weights) AS q(t, w) WHERE q.t = ANY(m.lexical_terms)) "
            ">= p_needed $$"
        ).format(
            fn=fn,
            m=sql.Identifier(o.schema, "memories"),
            # The namespaced keys already select the namespace's facts; the check stays (the
            # caller chooses `p_lookup`), but as a filter: as an index condition the planner
            # intersected the namespace's whole b-tree range with the keys' postings, a cost
            # that grows with the namespace, to drop nothing.
            namespace=sql.SQL("(m.namespace || '')" if namespaced else "m.namespace"),
            lookup=lookup,
        ),
        sql.SQL("REVOKE ALL ON FUNCTION {}{} FROM PUBLIC").format(fn, signature),
        sql.SQL("GRANT EXECUTE ON FUNCTION {}{} TO {}").format(
            fn, signature, sql.Identifier(o.app_role)
        ),
    ]


def term_statistics_migration(o: SchemaOptions) -> list[Statement]:
    """Migration 7: the counts table, its triggers, its backfill and the two indexes."""
    s = sql.Identifier(o.schema)
    role = sql.Identifier(o.app_role)
    terms = sql.Identifier(o.schema, TERMS_TABLE)
    memories = sql.Identifier(o.schema, "memories")
    fn = sql.Identifier(o.schema, "count_memory_terms")
    statements: list[Statement] = [
        # Forgetting now clears a fact's keywords too; facts forgotten before kept them.
        sql.SQL(
            "UPDATE {} SET lexical_terms = '{{}}' WHERE is_forgotten AND lexical_terms <> '{{}}'"
        ).format(memories),
        sql.SQL(
            "CREATE TABLE {t} (namespace text NOT NULL, term text NOT NULL, "
            "is_inference boolean NOT NULL, is_latest boolean NOT NULL, "
            "is_forgotten boolean NOT NULL, facts bigint NOT NULL, PRIMARY KEY ({key}))"
        ).format(t=terms, key=sql.SQL(_KEY)),
        sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(terms),
        sql.SQL(
            "CREATE POLICY namespace_isolation ON {} "
            "USING (namespace = current_setting('app.namespace', true))"
        ).format(terms),
        sql.SQL("GRANT SELECT ON {} TO {}").format(terms, role),
        _trigger_function(o),
        sql.SQL("REVOKE ALL ON FUNCTION {}() FROM PUBLIC").format(fn),
    ]
    for event, referencing in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
    ):
        statements.append(
            sql.SQL(
                "CREATE TRIGGER {name} AFTER {event} ON {m} REFERENCING {ref} "
                "FOR EACH STATEMENT EXECUTE FUNCTION {fn}()"
            ).format(
                name=sql.Identifier(f"memory_terms_{event.lower()}"),
                event=sql.SQL(event),
                m=memories,
                ref=sql.SQL(referencing),
                fn=fn,
            )
        )
    # TRUNCATE fires no row or transition-table triggers: its own trigger empties the counts,
    # whoever truncates (DELETE, not TRUNCATE: the table may be in the same TRUNCATE's list).
    truncated = sql.Identifier(o.schema, "truncate_memory_terms")
    statements += [
        sql.SQL(
            "CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
            "SET search_path = pg_catalog, pg_temp AS $$\n"
            "BEGIN\n  DELETE FROM {t};\n  RETURN NULL;\nEND $$"
        ).format(fn=truncated, t=terms),
        sql.SQL("REVOKE ALL ON FUNCTION {}() FROM PUBLIC").format(truncated),
        sql.SQL(
            "CREATE TRIGGER memory_terms_truncate AFTER TRUNCATE ON {m} "
            "FOR EACH STATEMENT EXECUTE FUNCTION {fn}()"
        ).format(m=memories, fn=truncated),
    ]
    statements += [
        sql.SQL(
            "INSERT INTO {t} ({key}, facts) SELECT namespace, term, is_inference, is_latest, "
            "is_forgotten, count(*) FROM ({rows}) AS s GROUP BY {key}"
        ).format(
            t=terms,
            key=sql.SQL(_KEY),
            rows=_delta_of(memories, 1),
        ),
        # No pending list: a search would scan it whole (after a bulk load fastupdate's list
        # grows large and every lookup pays for it); each insert updates the index instead.
        sql.SQL(
            "CREATE INDEX memories_lexical_terms ON {} USING gin (lexical_terms) "
            "WITH (fastupdate = off)"
        ).format(memories),
        *_holders_function(o),
        sql.SQL(
            "CREATE INDEX memories_expiring ON {}.memories (namespace, expires_at) "
            "WHERE expires_at IS NOT NULL AND NOT is_forgotten"
        ).format(s),
    ]
    return statements


def holders_of_all_migration(o: SchemaOptions) -> list[Statement]:
    """Migration 9: `keyword_holders` with `@>` (holders of every keyword of `p_lookup`), for a
    bounded search whose holders must hold several required keywords."""
    return _holders_function(o, HOLDERS_OF_ALL_FUNCTION, "@>")


def namespaced_terms_migration(o: SchemaOptions) -> list[Statement]:
    """Migration 10: the GIN index keyed by namespace and keyword, and both holder
    functions looking up through it.

    The index of migration 7 keys a keyword alone: a holder lookup read every namespace's
    postings of the query's keywords, then intersected them with the namespace's rows (a
    BitmapAnd with the namespace's b-tree), ~1.4 ms of a ~3.6 ms lookup at 10 namespaces of
    10,000 facts, and growing with the number of namespaces. Keyed `namespace/keyword`, the
    lookup reads only the namespace's postings. Keywords are `[a-z0-9]+`, so the last `/`
    splits a key unambiguously, whatever the namespace holds. The old index served only these
    two functions (row-level security keeps the application role's own `&&` off any index), so
    it goes: an ingest still updates one GIN index.
    """
    nt = sql.Identifier(o.schema, NAMESPACED_TERMS_FUNCTION)
    memories = sql.Identifier(o.schema, "memories")
    return [
        # IMMUTABLE (an index expression) and without a `SET search_path`, which would keep it
        # from being inlined and cost a configuration switch per row: every name is qualified.
        # Executable by PUBLIC (the default): a writer's insert evaluates the index expression
        # with its own privileges, and the function reads nothing.
        sql.SQL(
            "CREATE FUNCTION {nt}(p_namespace text, p_terms text[]) RETURNS text[] "
            "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
            "SELECT ARRAY(SELECT p_namespace OPERATOR(pg_catalog.||) '/' "
            "OPERATOR(pg_catalog.||) t FROM pg_catalog.unnest(p_terms) AS t) $$"
        ).format(nt=nt),
        # No pending list, as for the index it replaces (migration 7).
        sql.SQL(
            "CREATE INDEX memories_namespaced_terms ON {m} USING gin "
            "({nt}(namespace, lexical_terms)) WITH (fastupdate = off)"
        ).format(m=memories, nt=nt),
        *_holders_function(o, namespaced=True),
        *_holders_function(o, HOLDERS_OF_ALL_FUNCTION, "@>", namespaced=True),
        sql.SQL("DROP INDEX {}").format(sql.Identifier(o.schema, "memories_lexical_terms")),
    ]
