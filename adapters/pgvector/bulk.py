"""A bulk path for loading many facts at once (benchmarks, imports): binary COPY as the owner.

PostgreSQL refuses `COPY FROM` into a table whose row-level security applies to the user, so
this path runs as the owner (`admin_conninfo`), and is therefore an operator tool, never a
request path. It writes facts as stated, current and unlinked: no extraction, no slots check.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.pgvector.connection import NAMESPACE_LOCK, port_errors, register_vector
from factledger.application.memory.rules import validate_namespace

_COLUMNS = (
    "namespace", "id", "text", "slot", "occurred_at", "document_id", "lexical_terms", "embedding"
)  # fmt: skip
_TYPES = ["text", "text", "text", "text", "timestamptz", "text", "text[]", "vector"]


@dataclass(frozen=True, slots=True)
class BulkFact:
    namespace: str
    memory_id: str
    text: str
    vector: np.ndarray[Any, Any]
    slot: str | None = None
    occurred_at: datetime | None = None
    document_id: str | None = None
    terms: tuple[str, ...] = ()  # its keywords (`application.memory.lexical.lexical_terms`)


async def bulk_load_facts(config: PgvectorConfig, facts: Iterable[BulkFact]) -> int:
    """Loads facts in one transaction with binary COPY; returns the number of rows written."""
    written = 0
    rows = list(facts)
    for fact in rows:
        validate_namespace(fact.namespace)
    with port_errors("bulk_load"):
        async with await psycopg.AsyncConnection.connect(config.admin_conninfo) as conn:
            await register_vector(conn)
            # Every writer of `memories` holds its namespaces' locks (the kept keyword counts
            # change with every write); in sorted order, so two bulk loads never wait on each
            # other in a cycle.
            await conn.execute(
                sql.SQL("SELECT {} FROM unnest(%s::text[]) AS n").format(
                    NAMESPACE_LOCK.format(sql.Identifier("n"))
                ),
                [sorted({fact.namespace for fact in rows})],  # unnest keeps the order
            )
            statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
                sql.Identifier(config.schema, "memories"),
                sql.SQL(", ").join(sql.Identifier(c) for c in _COLUMNS),
            )
            async with conn.cursor() as cur, cur.copy(statement) as copy:
                copy.set_types(_TYPES)
                for fact in rows:
                    await copy.write_row(
                        (
                            fact.namespace,
                            fact.memory_id,
                            fact.text,
                            fact.slot,
                            fact.occurred_at,
                            fact.document_id,
                            list(fact.terms),
                            np.asarray(fact.vector, dtype=np.float32),
                        )
                    )
                    written += 1
            await conn.execute(
                sql.SQL("ANALYZE {}").format(sql.Identifier(config.schema, "memories"))
            )
            await conn.commit()
    return written
