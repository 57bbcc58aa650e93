"""Migration 11: what a mirror needs to follow a namespace's facts.

- `memory_versions`: per namespace, a `version` that every transaction writing its facts
  raises once, and an `epoch` that changes when facts are deleted or the table truncated (a
  mirror cannot follow a deletion row by row: it loads the namespace again).
- `memories.changed_in`: the version of the transaction that last wrote the row, stamped by a
  row trigger; an index on `(namespace, changed_in)` finds the rows a mirror has not seen.

Why versions are seen in order: the trigger raises the version with an upsert whose row lock is
held until the transaction ends, so writers of a namespace take versions one after the other
(they already serialise on the namespace's advisory lock). A reader that sees version V
therefore sees every row stamped V or lower: those transactions committed before V's began
writing. A sequence or a transaction id would not do: they are drawn before commit, in an
order commits need not follow, and a reader could skip a row that commits late.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

if TYPE_CHECKING:
    from factledger.adapters.pgvector.schema import SchemaOptions, Statement

VERSIONS_TABLE = "memory_versions"
# The transaction-local setting that holds a namespace's version once the transaction has
# raised it: later rows of the same transaction take it without touching the versions row.
_VERSION_SETTING = "factledger.mv_"


def mirror_versions_migration(o: SchemaOptions) -> list[Statement]:
    role = sql.Identifier(o.app_role)
    versions = sql.Identifier(o.schema, VERSIONS_TABLE)
    memories = sql.Identifier(o.schema, "memories")
    epochs = sql.Identifier(o.schema, "memory_epochs")
    stamp = sql.Identifier(o.schema, "memory_version_stamp")
    reset = sql.Identifier(o.schema, "memory_version_reset")
    emptied = sql.Identifier(o.schema, "memory_versions_emptied")
    return [
        sql.SQL("CREATE SEQUENCE {}").format(epochs),
        sql.SQL(
            "CREATE TABLE {v} (namespace text PRIMARY KEY, "
            "epoch bigint NOT NULL DEFAULT nextval({e}), version bigint NOT NULL)"
        ).format(v=versions, e=sql.Literal(f"{o.schema}.memory_epochs")),
        # Readers see their own namespace's row only; writes go through the owner's triggers.
        sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(versions),
        sql.SQL(
            "CREATE POLICY namespace_isolation ON {} "
            "USING (namespace = current_setting('app.namespace', true))"
        ).format(versions),
        sql.SQL("GRANT SELECT ON {} TO {}").format(versions, role),
        # No table rewrite: a constant default is stored in the catalogue.
        sql.SQL("ALTER TABLE {} ADD COLUMN changed_in bigint NOT NULL DEFAULT 0").format(memories),
        sql.SQL("CREATE INDEX memories_namespace_changed ON {} (namespace, changed_in)").format(
            memories
        ),
        sql.SQL(
            """CREATE FUNCTION {stamp}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $$
            DECLARE
              setting text := {prefix} || md5(NEW.namespace);
              v bigint := nullif(current_setting(setting, true), '')::bigint;
            BEGIN
              IF v IS NULL THEN
                INSERT INTO {v} AS m (namespace, version) VALUES (NEW.namespace, 1)
                ON CONFLICT (namespace) DO UPDATE SET version = m.version + 1
                RETURNING m.version INTO v;
                PERFORM set_config(setting, v::text, true);
              END IF;
              NEW.changed_in := v;
              RETURN NEW;
            END $$"""
        ).format(stamp=stamp, prefix=sql.Literal(_VERSION_SETTING), v=versions),
        sql.SQL(
            "CREATE TRIGGER memories_version_stamp BEFORE INSERT OR UPDATE ON {} "
            "FOR EACH ROW EXECUTE FUNCTION {}()"
        ).format(memories, stamp),
        # A deletion (a namespace dropped, a record erased) starts a new epoch: mirrors reload.
        sql.SQL(
            """CREATE FUNCTION {reset}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
              INSERT INTO {v} AS m (namespace, version)
              SELECT DISTINCT namespace, 1 FROM gone
              ON CONFLICT (namespace) DO UPDATE
              SET version = m.version + 1, epoch = nextval({e});
              RETURN NULL;
            END $$"""
        ).format(reset=reset, v=versions, e=sql.Literal(f"{o.schema}.memory_epochs")),
        sql.SQL(
            "CREATE TRIGGER memories_version_reset AFTER DELETE ON {} "
            "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {}()"
        ).format(memories, reset),
        # TRUNCATE fires no row or transition-table trigger: every namespace starts again.
        sql.SQL(
            """CREATE FUNCTION {emptied}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
              DELETE FROM {v};
              RETURN NULL;
            END $$"""
        ).format(emptied=emptied, v=versions),
        sql.SQL(
            "CREATE TRIGGER memories_versions_emptied AFTER TRUNCATE ON {} "
            "FOR EACH STATEMENT EXECUTE FUNCTION {}()"
        ).format(memories, emptied),
        sql.SQL("REVOKE ALL ON FUNCTION {}(), {}(), {}() FROM PUBLIC").format(
            stamp, reset, emptied
        ),
    ]
