"""Reading a namespace into a mirror, and what changed since.

- `load`: the version and every fact of a namespace from one snapshot (a repeatable-read,
  read-only transaction), vectors in binary; only its count (`TooMany`) when the namespace
  holds more facts than the load may take.
- `changes`: the namespace's epoch and version, and the rows stamped after the mirror's
  version, in one statement (one snapshot: the rows are exactly those up to the version read),
  prepared and bound to the namespace in one round trip (`prepared_search`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.rows import dict_row

from factledger.adapters.pgvector.connection import PgvectorConnections
from factledger.adapters.pgvector.mirror.state import MirroredNamespace
from factledger.adapters.pgvector.prepared_search import run_prepared
from factledger.application.memory.types import Namespace

# What a search reads of a fact, and what the mirror follows it by.
_COLUMNS = (
    "id,text,is_latest,is_inference,is_forgotten,expires_at,occurred_at,document_id,"
    "relations::text AS relations,metadata::text AS metadata,source_indexes,lexical_terms,"
    "changed_in,embedding"
)
_VERSION = "SELECT epoch,version FROM memory_versions WHERE namespace=%(ns)s"
# One row at least: the version's columns (NULL without a versions row) beside each changed
# row's (NULL when none changed). The vector as text here: a handful of rows at most, and
# `float4` prints its shortest exact form, so parsing it gives the floats `load` reads.
_CHANGES = (
    "SELECT v.epoch AS v_epoch,v.version AS v_version,c.* FROM (SELECT 1) AS one "  # noqa: S608
    "LEFT JOIN memory_versions AS v ON v.namespace=%(ns)s LEFT JOIN LATERAL (SELECT "
    f"{_COLUMNS.replace(',embedding', ',embedding::text AS embedding')} "
    "FROM memories WHERE namespace=%(ns)s AND changed_in>%(known)s) AS c ON true"
).encode()
# Rows decoded and applied between two yields to the event loop: few enough that a mirror's
# load never holds the loop for as long as a search beside it takes.
LOAD_SLICE = 32
_COUNT = "SELECT count(*) FROM memories WHERE namespace=%s"
_ALL = f"SELECT {_COLUMNS} FROM memories WHERE namespace=%s"  # noqa: S608 (constants only)


@dataclass(frozen=True, slots=True)
class TooMany:
    """What a load found instead of a mirror: the namespace holds `facts`, more than it may
    take."""

    facts: int


@dataclass(frozen=True, slots=True)
class Changes:
    epoch: int | None  # None: the namespace has no versions row (never written, or truncated)
    version: int
    rows: list[dict[str, Any]]


class _VectorLoader(Loader):
    """pgvector's binary `vector`: dimension and an unused word (uint16 each, big-endian),
    then big-endian float4s."""

    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray[Any, Any]:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32)


async def load(
    db: PgvectorConnections, ns: Namespace, *, max_facts: int, dimension: int, graph_from: int
) -> MirroredNamespace | TooMany:
    """The namespace's facts as one snapshot has them, with a graph of their vectors from
    `graph_from` facts (built in a thread); past `max_facts`, only how many there are."""
    async with db.snapshot(ns) as conn:
        cur = await conn.execute(_COUNT, [ns])
        count_row = await cur.fetchone()
        facts = 0 if count_row is None else int(count_row[0])
        if facts > max_facts:
            return TooMany(facts)
        cur = await conn.execute(_VERSION, {"ns": ns})
        version_row = await cur.fetchone()
        epoch, version = (None, 0)
        if version_row is not None:
            epoch, version = int(version_row[0]), int(version_row[1])
        mirror = MirroredNamespace(epoch, version, dimension, capacity=facts + facts // 16)
        cursor = conn.cursor(row_factory=dict_row, binary=True)
        oid = conn.adapters.types["vector"].oid
        cursor.adapters.register_loader(oid, _VectorLoader)
        await cursor.execute(_ALL, [ns])
        # Decoded and applied a slice at a time, handing the event loop back between slices:
        # a load runs beside searches, and one stretch over every row would hold each search
        # that finished its round trip meanwhile for as long as the whole load's CPU.
        while rows := await cursor.fetchmany(LOAD_SLICE):
            mirror.apply(rows)
            await asyncio.sleep(0)
    if len(mirror) >= graph_from:
        await asyncio.to_thread(mirror.index_vectors)
    return mirror


async def changes(db: PgvectorConnections, ns: Namespace, known: int) -> Changes:
    args = {"ns": ns, "known": known}
    rows = await db.one_statement(
        lambda conn: run_prepared(conn, ns, _CHANGES, args, ef_search=None)
    )
    epoch, version = None, 0
    changed = []
    for row in rows:
        found_epoch, found_version = row.pop("v_epoch"), row.pop("v_version")
        if found_epoch is not None:
            epoch, version = int(found_epoch), int(found_version)
        if row["id"] is not None:
            text = row["embedding"]
            row["embedding"] = np.array(text[1:-1].split(","), dtype=np.float32)
            changed.append(row)
    return Changes(epoch, version, changed)
