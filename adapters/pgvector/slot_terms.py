"""Migration 8: the words each memory hands on to the fact that replaces it in its slot.

`application.memory.succession`: a fact superseding its slot's current fact is also
keyed by what that fact hands on, which ingest reads from the superseded row under the
namespace lock. Facts written before it hand on nothing until their sessions are ingested again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

if TYPE_CHECKING:
    from factledger.adapters.pgvector.schema import SchemaOptions, Statement


def slot_terms_migration(o: SchemaOptions) -> list[Statement]:
    table = sql.Identifier(o.schema, "memories")
    return [
        sql.SQL("ALTER TABLE {} ADD COLUMN slot_terms text[] NOT NULL DEFAULT '{{}}'").format(table)
    ]
