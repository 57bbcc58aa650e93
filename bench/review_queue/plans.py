"""The query plans behind the queue's pages: each case's statements, as the product's store
builds them (`adapters.review_queue_sql.QueueTables`), run under `EXPLAIN (ANALYZE, BUFFERS)`
on the bench's database, and the lines that say which path was taken printed with the time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from factledger.adapters.review_queue_sql import Cursorish, QueueTables
from factledger.bench.review_queue.compose import Case

# The plan lines that name the path a statement took (and its cost in rows and time).
SHOWN = ("Scan", "Aggregate", "Execution Time", "Heap Fetches")


class _Capturing:
    """A `Runner` that runs the statements and keeps them, to be explained afterwards."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self.conn = conn
        self.statements: list[tuple[str, list[object]]] = []

    def run(self, query: str, args: Sequence[object] = ()) -> Cursorish:
        self.statements.append((query, list(args)))
        return self.conn.execute(query.replace("?", "%s"), list(args))

    def run_many(self, query: str, rows: Sequence[Sequence[object]]) -> None:
        raise RuntimeError("the plans only read")


@dataclass(frozen=True, slots=True)
class Plan:
    case: str
    statement: int  # its place among the case's statements
    lines: list[str]


def plans(conninfo: str, schema: str, tenant: str, cases: list[Case]) -> list[Plan]:
    tables = QueueTables(f'"{schema}".')
    found = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for case in cases:
            runner = _Capturing(conn)
            if case.groups:
                tables.groups(runner, tenant, case.where, offset=0, limit=50)
            else:
                tables.page(runner, tenant, case.where, case.cursor, 50)
            for n, (query, args) in enumerate(runner.statements, start=1):
                explained = conn.execute(
                    "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + query.replace("?", "%s"), args
                ).fetchall()
                lines = [str(r[0]) for r in explained if any(s in str(r[0]) for s in SHOWN)]
                found.append(Plan(case.name, n, lines))
    return found
