"""The query plans behind the queue's pages: each case's statements, as the product's store
builds them (`adapters.review_queue_sql.QueueTables`), run under `EXPLAIN (ANALYZE, BUFFERS)`
on the bench's database, and the lines that say which path was taken printed with the time."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

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


# A position past every one: the same filter, but the store counts it over the rows (a
# position bound is not a kept counter), as every count was before the counters.
PAST_ALL = 2**62


def counted_over_rows(case: Case) -> Case:
    return replace(case, name=f"{case.name} [counted]", where=replace(case.where, up_to=PAST_ALL))


def _statements(
    conn: psycopg.Connection[tuple[object, ...]], tables: QueueTables, tenant: str, case: Case
) -> list[tuple[str, list[object]]]:
    runner = _Capturing(conn)
    if case.groups:
        tables.groups(runner, tenant, case.where, offset=0, limit=50)
    else:
        tables.page(runner, tenant, case.where, case.cursor, 50)
    return runner.statements


@dataclass(frozen=True, slots=True)
class KeptVsCounted:
    case: str
    kept_ms: float  # median execution time of the case's statements, counters read
    counted_ms: float  # the same filter counted over the rows


def kept_vs_counted(
    conninfo: str, schema: str, tenant: str, cases: list[Case], *, rounds: int = 7
) -> list[KeptVsCounted]:
    """Each case's statements under `EXPLAIN ANALYZE` as the store reads them (counters
    where they apply) and counted over the rows, in alternating rounds: the database's own
    execution time, side by side."""
    tables = QueueTables(f'"{schema}".')
    found = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for case in cases:
            times: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(rounds):
                for kept in (True, False):
                    shown = case if kept else counted_over_rows(case)
                    total = 0.0
                    for query, args in _statements(conn, tables, tenant, shown):
                        explained = conn.execute(
                            "EXPLAIN (ANALYZE, COSTS OFF) " + query.replace("?", "%s"), args
                        ).fetchall()
                        for row in explained:
                            hit = re.search(r"Execution Time: ([0-9.]+) ms", str(row[0]))
                            total += float(hit.group(1)) if hit else 0.0
                    times[kept].append(total)
            found.append(
                KeptVsCounted(
                    case.name, statistics.median(times[True]), statistics.median(times[False])
                )
            )
    return found


def plans(conninfo: str, schema: str, tenant: str, cases: list[Case]) -> list[Plan]:
    """Each case's plans as the store reads it, then counted over the rows."""
    tables = QueueTables(f'"{schema}".')
    found = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for shown in [c for case in cases for c in (case, counted_over_rows(case))]:
            for n, (query, args) in enumerate(_statements(conn, tables, tenant, shown), start=1):
                explained = conn.execute(
                    "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + query.replace("?", "%s"), args
                ).fetchall()
                lines = [str(r[0]) for r in explained if any(s in str(r[0]) for s in SHOWN)]
                found.append(Plan(shown.name, n, lines))
    return found
