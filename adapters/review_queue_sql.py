"""The review queue's tables and statements, shared by its SQLite and PostgreSQL stores.

Statements are written once with `?` placeholders and plain SQL both databases read the same;
each store runs them through its `Runner` (PostgreSQL's swaps the placeholders). Every filter
is an equality on an indexed column led by the tenant and followed by the position, so a
filtered page walks one index in queue order and stops after a page; a count reads the same
index range. The text search (a part of the field name or the subject's reference) reads the
subjects whose reference holds it and the rows of the field names that do. Counts are read
from counters the projection keeps with the rows (`counter_statements` for the whole queue,
single filters and groups; `review_queue_combined` for combined filters, ages and text).
"""

# Statements are built from the code's own table and column names; every value is a parameter.
# ruff: noqa: S608

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, Protocol

from factledger.adapters.review_queue_combined import CombinedCounts, day_of, like, tuple_key
from factledger.application.json_text import dumps_sorted, loads
from factledger.application.review_queue.ports import (
    ItemRow,
    RowGroup,
    RowGroups,
    RowPage,
    SessionRow,
    SubjectRow,
    time_key,
)
from factledger.application.review_queue.queue import (
    QueueChoices,
    QueueCursor,
    QueueFilter,
    Selected,
)
from factledger.domain.values import JsonObject

ITEM_COLUMNS = (
    "tenant, position, subject_id, change_id, field, origin, proposer, proposed_key, kind, "
    "external_ref, group_key, session_id, said_at, conversation_type, doc"
)
# Each filter column gets an index (tenant, column, position): the page's order is the index's.
FILTER_COLUMNS = ("kind", "field", "origin", "proposer", "conversation_type", "group_key")


def table_statements(prefix: str, *, text: str = "TEXT") -> tuple[str, ...]:
    """The DDL, tables named `<prefix>review_queue_*` (`prefix`: a schema and a dot, or "");
    `text`: the column type of keys (PostgreSQL's byte-ordered "C" collation)."""
    t = f"{prefix}review_queue"
    indexes = tuple(
        f"CREATE INDEX IF NOT EXISTS review_queue_by_{column} "
        f"ON {t}_items (tenant, {column}, position)"
        for column in (*FILTER_COLUMNS, "proposed_key")
    )
    return (
        f"""CREATE TABLE IF NOT EXISTS {t}_subjects (subject_id {text} PRIMARY KEY,
        tenant {text} NOT NULL, kind {text} NOT NULL, external_ref {text} NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {t}_sessions (subject_id {text} NOT NULL,
        session_id {text} NOT NULL, conversation_type {text}, said_at {text} NOT NULL,
        PRIMARY KEY (subject_id, session_id))""",
        f"""CREATE TABLE IF NOT EXISTS {t}_items (tenant {text} NOT NULL,
        position BIGINT NOT NULL, subject_id {text} NOT NULL, change_id {text} NOT NULL,
        field {text} NOT NULL, origin {text} NOT NULL, proposer {text} NOT NULL,
        proposed_key {text} NOT NULL, kind {text} NOT NULL, external_ref {text} NOT NULL,
        search {text} NOT NULL, group_key {text} NOT NULL, session_id {text},
        said_at {text}, conversation_type {text}, doc {text} NOT NULL,
        PRIMARY KEY (tenant, position))""",
        f"""CREATE UNIQUE INDEX IF NOT EXISTS review_queue_by_change
        ON {t}_items (subject_id, change_id)""",
        *indexes,
        f"""CREATE TABLE IF NOT EXISTS {t}_tracking (name {text} PRIMARY KEY,
        position BIGINT NOT NULL)""",
    )


# The dimensions the console counts on their own, each a single equality; "all" is the
# tenant's whole queue (value "").
COUNTED = ("kind", "field", "origin", "proposer", "conversation_type")
ALL = "all"
# What a row's counters are kept by, in `SqlQueueWrites._count`'s order.
COUNTED_COLUMNS = f"tenant, {', '.join(COUNTED)}, group_key, subject_id, proposed_key"


def counter_statements(prefix: str, *, text: str = "TEXT") -> tuple[str, ...]:
    """The counters the projection keeps up with its rows, so the whole queue's count, a
    single filter's count and the groups are read, not counted: pending items per tenant and
    per filter value; per group its items, distinct subjects and oldest position; and each
    group's subjects with their items (the distinct count's source). Filled from the rows, so
    an existing database gets them exact."""
    t = f"{prefix}review_queue"
    fill_counts = " UNION ALL ".join(
        [
            f"SELECT tenant, '{ALL}', '', count(*) FROM {t}_items GROUP BY tenant",
            *(
                f"SELECT tenant, '{c}', {c}, count(*) FROM {t}_items "
                f"WHERE {c} IS NOT NULL GROUP BY tenant, {c}"
                for c in COUNTED
            ),
        ]
    )
    return (
        f"""CREATE TABLE IF NOT EXISTS {t}_counts (tenant {text} NOT NULL,
        dimension {text} NOT NULL, value {text} NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (tenant, dimension, value))""",
        f"""CREATE TABLE IF NOT EXISTS {t}_group_subjects (tenant {text} NOT NULL,
        group_key {text} NOT NULL, subject_id {text} NOT NULL, n BIGINT NOT NULL,
        PRIMARY KEY (tenant, group_key, subject_id))""",
        f"""CREATE TABLE IF NOT EXISTS {t}_groups (tenant {text} NOT NULL,
        group_key {text} NOT NULL, n BIGINT NOT NULL, subjects BIGINT NOT NULL,
        first_position BIGINT NOT NULL, PRIMARY KEY (tenant, group_key))""",
        f"""CREATE INDEX IF NOT EXISTS review_queue_groups_by_size
        ON {t}_groups (tenant, n DESC, first_position)""",
        f"DELETE FROM {t}_counts",
        f"DELETE FROM {t}_group_subjects",
        f"DELETE FROM {t}_groups",
        f"INSERT INTO {t}_counts (tenant, dimension, value, n) {fill_counts}",
        f"INSERT INTO {t}_group_subjects (tenant, group_key, subject_id, n) "
        f"SELECT tenant, group_key, subject_id, count(*) FROM {t}_items "
        f"GROUP BY tenant, group_key, subject_id",
        f"INSERT INTO {t}_groups (tenant, group_key, n, subjects, first_position) "
        f"SELECT tenant, group_key, count(*), count(DISTINCT subject_id), min(position) "
        f"FROM {t}_items GROUP BY tenant, group_key",
    )


def counted_filter(where: QueueFilter) -> tuple[str, str] | None:
    """The counter holding the filter's exact count, as (dimension, value): none or one
    counted equality, or a group, and nothing else (combined filters, ages, text and
    positions are counted over the rows)."""
    chosen = [
        (dimension, value)
        for dimension, value in (
            ("kind", where.kind),
            ("field", where.field),
            ("origin", None if where.origin is None else where.origin.value),
            ("proposer", where.proposer),
            ("conversation_type", where.conversation_type),
            ("group", where.group),
        )
        if value is not None
    ]
    others = replace(
        where, kind=None, field=None, origin=None, proposer=None, conversation_type=None, group=None
    )
    if len(chosen) > 1 or not others.is_empty():
        return None
    return chosen[0] if chosen else (ALL, "")


def covering_statements(prefix: str) -> tuple[str, ...]:
    """The groups' index: every column their aggregate reads, so it is answered from the
    index alone, in group order, without a visit to the rows."""
    return (
        f"CREATE INDEX IF NOT EXISTS review_queue_by_group_subject "
        f"ON {prefix}review_queue_items (tenant, group_key, subject_id, position)",
    )


class Cursorish(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Runner(Protocol):
    """One connection's statements, `?` placeholders."""

    def run(self, query: str, args: Sequence[object] = ()) -> Cursorish: ...

    def run_many(self, query: str, rows: Sequence[Sequence[object]]) -> None: ...


def where_clause(
    tenant: str,
    where: QueueFilter,
    *,
    subjects: str | None = None,
    fields: Sequence[str] = (),
) -> tuple[str, list[object]]:
    """The filter as SQL. The text search, given `subjects` (that table's name) and `fields`
    (the tenant's field names holding the text, lower-cased as Python does), reads the
    subjects whose reference holds it (a scan of the subjects, not of the rows) and the rows
    of those fields by their indexes; without them, each row's `search` column is checked."""
    parts: list[str] = ["tenant = ?"]
    args: list[object] = [tenant]
    equalities = (
        ("kind", where.kind),
        ("field", where.field),
        ("origin", None if where.origin is None else where.origin.value),
        ("proposer", where.proposer),
        ("conversation_type", where.conversation_type),
        ("group_key", where.group),
        ("subject_id", where.subject_id),
    )
    for column, value in equalities:
        if value is not None:
            parts.append(f"{column} = ?")
            args.append(value)
    if where.proposed_before is not None:
        parts.append("proposed_key < ?")
        args.append(time_key(where.proposed_before))
    if where.proposed_after is not None:
        parts.append("proposed_key >= ?")
        args.append(time_key(where.proposed_after))
    if where.up_to is not None:
        parts.append("position <= ?")
        args.append(where.up_to)
    if where.text and subjects is not None and "\n" not in where.text:
        by_field = f"field IN ({', '.join('?' for _ in fields)}) OR " if fields else ""
        parts.append(
            f"({by_field}subject_id IN (SELECT subject_id FROM {subjects} "
            f"WHERE tenant = ? AND search LIKE ? ESCAPE '\\'))"
        )
        args.extend([*fields, tenant, like(where.text)])
    elif where.text:
        parts.append("search LIKE ? ESCAPE '\\'")
        args.append(like(where.text))
    return " AND ".join(parts), args


def _plain_where(tenant: str, where: QueueFilter) -> tuple[str, list[object]]:
    return where_clause(tenant, where)


def search_text(field: str, external_ref: str) -> str:
    return f"{field}\n{external_ref}".lower()


def subject_search_statements(
    prefix: str, *, text: str = "TEXT", ref_of_search: str
) -> tuple[str, ...]:
    """The subjects' reference lower-cased (as the rows' `search` keeps it), for the text
    search to find subjects rather than scan rows. `ref_of_search`: the SQL that takes the
    reference back out of a row's `search` (the part after its line break), so existing
    subjects with pending rows get it exactly; others get the database's `lower`."""
    t = f"{prefix}review_queue"
    return (
        f"ALTER TABLE {t}_subjects ADD COLUMN search {text} NOT NULL DEFAULT ''",
        f"UPDATE {t}_subjects SET search = coalesce((SELECT {ref_of_search} FROM {t}_items i "
        f"WHERE i.subject_id = {t}_subjects.subject_id LIMIT 1), lower(external_ref))",
    )


def _row(values: Sequence[Any]) -> ItemRow:
    doc = loads(str(values[14]))
    return ItemRow(
        tenant=str(values[0]),
        position=int(values[1]),
        subject_id=str(values[2]),
        change_id=str(values[3]),
        field=str(values[4]),
        origin=str(values[5]),
        proposer=str(values[6]),
        proposed_key=str(values[7]),
        kind=str(values[8]),
        external_ref=str(values[9]),
        group_key=str(values[10]),
        session_id=None if values[11] is None else str(values[11]),
        said_at=None if values[12] is None else str(values[12]),
        conversation_type=None if values[13] is None else str(values[13]),
        doc=doc if isinstance(doc, dict) else {},
    )


class QueueTables:
    """The statements over one set of tables (`prefix` as in `table_statements`)."""

    def __init__(self, prefix: str) -> None:
        t = f"{prefix}review_queue"
        self.items, self.subjects = f"{t}_items", f"{t}_subjects"
        self.sessions, self.tracking = f"{t}_sessions", f"{t}_tracking"
        self.counts, self.groups_table = f"{t}_counts", f"{t}_groups"
        self.group_subjects = f"{t}_group_subjects"
        self.tuples, self.tuple_days = f"{t}_tuples", f"{t}_tuple_days"
        self.combined = CombinedCounts(prefix)

    # -- reads -------------------------------------------------------------------------------

    def _fields(self, db: Runner, tenant: str, where: QueueFilter) -> list[str]:
        """The tenant's field names holding the text search's text (none without one)."""
        if not where.text:
            return []
        text = where.text.lower()
        return [f for f in self._distinct(db, tenant, "field") if text in f.lower()]

    def _where(self, db: Runner, tenant: str, where: QueueFilter) -> tuple[str, list[object]]:
        fields = self._fields(db, tenant, where)
        return where_clause(tenant, where, subjects=self.subjects, fields=fields)

    def _kept_total(
        self, tenant: str, where: QueueFilter, fields: Sequence[str]
    ) -> tuple[str, list[object]] | None:
        """The filter's exact count from the counters, as a scalar subquery (None: the
        filter is counted over its rows)."""
        kept = counted_filter(where)
        if kept is not None:
            return self._kept_count(tenant, *kept)
        return self.combined.count(tenant, where, fields, _plain_where)

    def page(
        self, db: Runner, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int
    ) -> RowPage:
        """One statement (one snapshot, one round trip): the page's rows, the filter's exact
        count and newest position, and whether matches lie beyond the page's other end."""
        fields = self._fields(db, tenant, where)
        clause, args = where_clause(tenant, where, subjects=self.subjects, fields=fields)
        backwards = cursor.before is not None and cursor.after is None
        if backwards:
            bound, order, step = "AND position < ?", "DESC", [cursor.before]
            # Matches after the page: at or after the position it ends before.
            beyond, mark = "position >= ?", cursor.before
        elif cursor.after is not None:
            bound, order, step = "AND position > ?", "ASC", [cursor.after]
            # Matches before the page: at or before the position it starts after.
            beyond, mark = "position <= ?", cursor.after
        else:
            bound, order, step, beyond, mark = "", "ASC", [], "1 = 0", None
        marks = [] if mark is None else [mark]
        kept = self._kept_total(tenant, where, fields)
        if kept is None:
            counted, counted_args = (
                f"SELECT count(*) AS total, max(position) AS newest, "
                f"EXISTS (SELECT 1 FROM {self.items} WHERE {clause} AND {beyond}) AS beyond "
                f"FROM {self.items} WHERE {clause}",
                [*args, *marks, *args],
            )
        else:  # the count is the counters': read, not counted; the newest is an index's end
            kept_sql, total_args = kept
            newest_sql, newest_args = f"SELECT max(position) FROM {self.items} WHERE {clause}", args
            if where.proposed_before is not None or where.proposed_after is not None or where.text:
                # No index ends at an age's newest position (the age index is in time order,
                # the primary key walks back past every newer row), and a text's would scan
                # the subjects once more: the tenant's newest bounds the snapshot as well, no
                # row after it matching the filter.
                newest_sql, newest_args = (
                    f"SELECT max(position) FROM {self.items} WHERE tenant = ?",
                    [tenant],
                )
            counted, counted_args = (
                f"SELECT {kept_sql} AS total, ({newest_sql}) AS newest, "
                f"EXISTS (SELECT 1 FROM {self.items} WHERE {clause} AND {beyond}) AS beyond",
                [*total_args, *newest_args, *args, *marks],
            )
        found = db.run(
            f"WITH shown AS (SELECT {ITEM_COLUMNS} FROM {self.items} WHERE {clause} {bound} "
            f"ORDER BY position {order} LIMIT ?), "
            f"counted AS ({counted}) "
            f"SELECT shown.*, counted.total, counted.newest, counted.beyond "
            f"FROM counted LEFT JOIN shown ON 1 = 1 ORDER BY shown.position {order}",
            [*args, *step, limit + 1, *counted_args],
        ).fetchall()
        width = len(ITEM_COLUMNS.split(","))
        total, newest, past = int(found[0][width]), int(found[0][width + 1] or 0), found[0][-1]
        newest = newest if total else 0  # no snapshot of an empty filter
        rows = [_row(r) for r in found if r[0] is not None]
        more = len(rows) > limit
        rows = rows[:limit]
        if backwards:
            rows.reverse()
        if not rows:
            return RowPage([], total, None, None, newest)
        first, last = rows[0].position, rows[-1].position
        later, earlier = (bool(past), more) if backwards else (more, bool(past))
        return RowPage(
            rows,
            total,
            QueueCursor(after=last) if later else None,
            QueueCursor(before=first) if earlier else None,
            newest,
        )

    def groups(
        self, db: Runner, tenant: str, where: QueueFilter, *, offset: int, limit: int
    ) -> RowGroups:
        """One aggregate over the filter's rows, read from the index `(tenant, group_key,
        subject_id, position)` alone (it holds every column the aggregate needs), with the
        number of groups and the newest position beside each; then the shown groups' oldest
        rows by their positions."""
        if where.is_empty():
            return self._kept_groups(db, tenant, offset=offset, limit=limit)
        clause, args = self._where(db, tenant, where)
        found = db.run(
            f"SELECT group_key, count(*) AS n, count(DISTINCT subject_id), min(position) AS first, "
            f"count(*) OVER (), max(max(position)) OVER () "
            f"FROM {self.items} WHERE {clause} GROUP BY group_key "
            f"ORDER BY n DESC, first ASC LIMIT ? OFFSET ?",
            [*args, limit, offset],
        ).fetchall()
        if found:
            total, newest = int(found[0][4]), int(found[0][5] or 0)
        else:  # past the last group (or none): the totals alone
            total, newest = db.run(
                f"SELECT count(DISTINCT group_key), max(position) FROM {self.items} WHERE {clause}",
                args,
            ).fetchone()
            total, newest = int(total), int(newest or 0)
        return self._with_samples(db, tenant, found, total, newest)

    def _kept_count(self, tenant: str, dimension: str, value: str) -> tuple[str, list[object]]:
        """A counter as a scalar subquery (0 when the value has no pending items)."""
        if dimension == "group":
            return (
                f"coalesce((SELECT n FROM {self.groups_table} "
                f"WHERE tenant = ? AND group_key = ?), 0)",
                [tenant, value],
            )
        return (
            f"coalesce((SELECT n FROM {self.counts} "
            f"WHERE tenant = ? AND dimension = ? AND value = ?), 0)",
            [tenant, dimension, value],
        )

    def _kept_groups(self, db: Runner, tenant: str, *, offset: int, limit: int) -> RowGroups:
        """The unfiltered groups from their maintained table, in its size order."""
        newest_sql = f"(SELECT max(position) FROM {self.items} WHERE tenant = ?)"
        found = db.run(
            f"SELECT group_key, n, subjects, first_position, count(*) OVER (), {newest_sql} "
            f"FROM {self.groups_table} WHERE tenant = ? "
            f"ORDER BY n DESC, first_position ASC LIMIT ? OFFSET ?",
            [tenant, tenant, limit, offset],
        ).fetchall()
        if found:
            total, newest = int(found[0][4]), int(found[0][5] or 0)
        else:
            total, newest = db.run(
                f"SELECT (SELECT count(*) FROM {self.groups_table} WHERE tenant = ?), {newest_sql}",
                [tenant, tenant],
            ).fetchone()
            total, newest = int(total), int(newest or 0)
        return self._with_samples(db, tenant, found, total, newest)

    def _with_samples(
        self, db: Runner, tenant: str, found: list[Any], total: int, newest: int
    ) -> RowGroups:
        """The shown groups' oldest rows, read by their positions."""
        if not found:
            return RowGroups([], total, newest)
        firsts = [int(r[3]) for r in found]
        marks = ", ".join("?" for _ in firsts)
        samples = {
            row.position: row
            for row in (
                _row(r)
                for r in db.run(
                    f"SELECT {ITEM_COLUMNS} FROM {self.items} "
                    f"WHERE tenant = ? AND position IN ({marks})",
                    [tenant, *firsts],
                ).fetchall()
            )
        }
        groups = [
            RowGroup(str(r[0]), int(r[1]), int(r[2]), samples[int(r[3])])
            for r in found
            if int(r[3]) in samples
        ]
        return RowGroups(groups, total, newest)

    def select(self, db: Runner, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        clause, args = self._where(db, tenant, where)
        found = db.run(
            f"SELECT position, subject_id, change_id FROM {self.items} WHERE {clause} "
            f"ORDER BY position LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [Selected(int(r[0]), str(r[1]), str(r[2])) for r in found]

    def choices(self, db: Runner, tenant: str) -> QueueChoices:
        found = {column: self._distinct(db, tenant, column) for column in FILTER_COLUMNS}
        return QueueChoices(
            kind=found["kind"],
            field=found["field"],
            proposer=found["proposer"],
            conversation_type=found["conversation_type"],
        )

    def _distinct(self, db: Runner, tenant: str, column: str) -> list[str]:
        """The column's values in the tenant's rows, one index probe per value (a loose index
        scan: there are few values and many rows)."""
        found = db.run(
            f"WITH RECURSIVE t(v) AS (SELECT min({column}) FROM {self.items} WHERE tenant = ? "
            f"UNION ALL SELECT (SELECT min({column}) FROM {self.items} "
            f"WHERE tenant = ? AND {column} > t.v) FROM t WHERE t.v IS NOT NULL) "
            f"SELECT v FROM t WHERE v IS NOT NULL",
            [tenant, tenant],
        ).fetchall()
        return [str(r[0]) for r in found]

    # -- writes ------------------------------------------------------------------------------

    def read_position(self, db: Runner, name: str) -> int:
        row = db.run(f"SELECT position FROM {self.tracking} WHERE name = ?", [name]).fetchone()
        return 0 if row is None else int(row[0])

    def store_position(self, db: Runner, name: str, position: int) -> None:
        db.run(
            f"INSERT INTO {self.tracking} VALUES (?, ?) "
            f"ON CONFLICT (name) DO UPDATE SET position = excluded.position",
            [name, position],
        )

    def drop(self, db: Runner, name: str, *, empty: str = "DELETE FROM") -> None:
        """`empty`: the statement that empties a table (PostgreSQL's `TRUNCATE` leaves no dead
        rows behind for the rebuild's rows to be read past)."""
        for table in (
            self.items,
            self.sessions,
            self.subjects,
            self.counts,
            self.groups_table,
            self.group_subjects,
            self.tuples,
            self.tuple_days,
        ):
            db.run(f"{empty} {table}")
        db.run(f"DELETE FROM {self.tracking} WHERE name = ?", [name])


class SqlQueueWrites:
    """`QueueWrites` on one open transaction; new items are sent in batches (a rebuild adds
    a hundred thousand of them), flushed before any other statement so reads see them."""

    def __init__(self, db: Runner, tables: QueueTables, position: int) -> None:
        self._db, self._t = db, tables
        self.start_position = self.new_position = position
        self._adds: list[tuple[object, ...]] = []
        # What this transaction read or wrote of subjects and sessions: a rebuild asks for
        # each once per proposal.
        self._subjects: dict[str, SubjectRow | None] = {}
        self._sessions: dict[tuple[str, str], SessionRow | None] = {}
        # The counters' changes, applied once at the end of the transaction (a rebuild's
        # batch changes each counter many times): (tenant, dimension, value), (tenant,
        # group, subject) and (tenant, group).
        self._counted: Counter[tuple[str, str, str]] = Counter()
        self._members: Counter[tuple[str, str, str]] = Counter()
        self._grouped: Counter[tuple[str, str]] = Counter()
        # The combined counters' changes: (tenant, *tuple), (tenant, day, *tuple), and each
        # subject's pending items.
        self._tuples: Counter[tuple[str, ...]] = Counter()
        self._days: Counter[tuple[str, ...]] = Counter()
        self._pending: Counter[str] = Counter()

    def position(self) -> int:
        return self.new_position

    def advance(self, position: int) -> None:
        self.new_position = position

    def flush(self) -> None:
        if self._adds:
            adds, self._adds = self._adds, []
            self._db.run_many(
                f"INSERT INTO {self._t.items} ({ITEM_COLUMNS}, search) "
                f"VALUES ({', '.join('?' * 16)}) ON CONFLICT DO NOTHING",
                adds,
            )

    def _count(self, found: Sequence[Any], sign: int) -> None:
        """Counts a row's `COUNTED_COLUMNS` in (`sign` 1) or out (-1) of the counters."""
        tenant, group, subject_id = str(found[0]), str(found[6]), str(found[7])
        self._counted[tenant, ALL, ""] += sign
        for dimension, value in zip(COUNTED, found[1:6], strict=True):
            if value is not None:  # a conversation without a type is counted by no type
                self._counted[tenant, dimension, str(value)] += sign
        self._members[tenant, group, subject_id] += sign
        self._grouped[tenant, group] += sign
        self._pending[subject_id] += sign
        self._count_tuple(found, sign)

    def _count_tuple(self, found: Sequence[Any], sign: int) -> None:
        """The row's full filter tuple, and the same on its day of recording."""
        key = tuple_key(*found[1:6])
        self._tuples[(str(found[0]), *key)] += sign
        self._days[(str(found[0]), day_of(str(found[8])), *key)] += sign

    def _apply_combined(self) -> None:
        t = self._t
        columns = "kind, field, origin, proposer, conversation_type"
        for table, changes in ((t.tuples, self._tuples), (t.tuple_days, self._days)):
            changed = [(*k, d) for k, d in changes.items() if d]
            if not changed:
                continue
            keyed = "tenant, day, " if table == t.tuple_days else "tenant, "
            key = f"{keyed}{columns}"
            marks = ", ".join("?" for _ in key.split(","))
            self._db.run_many(
                f"INSERT INTO {table} AS kept ({key}, n) VALUES ({marks}, ?) "
                f"ON CONFLICT ({key}) DO UPDATE SET n = kept.n + excluded.n",
                changed,
            )
            matched = " AND ".join(f"{c.strip()} = ?" for c in key.split(","))
            self._db.run_many(
                f"DELETE FROM {table} WHERE {matched} AND n = 0", [k for *k, _ in changed]
            )
        self._db.run_many(
            f"UPDATE {t.subjects} SET pending = pending + ? WHERE subject_id = ?",
            [(d, subject_id) for subject_id, d in self._pending.items() if d],
        )
        self._tuples.clear()
        self._days.clear()
        self._pending.clear()

    def finish(self) -> None:
        """Sends what is left and applies the counters' changes: the transaction's end."""
        self.flush()
        t = self._t
        counted = [(*k, d) for k, d in self._counted.items() if d]
        self._db.run_many(
            f"INSERT INTO {t.counts} AS kept (tenant, dimension, value, n) VALUES (?, ?, ?, ?) "
            f"ON CONFLICT (tenant, dimension, value) DO UPDATE SET n = kept.n + excluded.n",
            counted,
        )
        self._db.run_many(
            f"DELETE FROM {t.counts} WHERE tenant = ? AND dimension = ? AND value = ? AND n = 0",
            [k for *k, _ in counted],
        )
        subjects: Counter[tuple[str, str]] = Counter()
        for (tenant, group, subject_id), d in self._members.items():
            if not d:
                continue
            row = self._db.run(
                f"INSERT INTO {t.group_subjects} AS kept (tenant, group_key, subject_id, n) "
                f"VALUES (?, ?, ?, ?) ON CONFLICT (tenant, group_key, subject_id) "
                f"DO UPDATE SET n = kept.n + excluded.n RETURNING n",
                [tenant, group, subject_id, d],
            ).fetchone()
            now = int(row[0])
            # A subject joins the group when its items go from none to some, leaves at none.
            subjects[tenant, group] += (now > 0) - (now - d > 0)
            if now == 0:
                self._db.run(
                    f"DELETE FROM {t.group_subjects} "
                    f"WHERE tenant = ? AND group_key = ? AND subject_id = ?",
                    [tenant, group, subject_id],
                )
        touched = list(self._grouped)  # a net change of none may still move the oldest
        self._db.run_many(
            f"INSERT INTO {t.groups_table} AS kept "
            f"(tenant, group_key, n, subjects, first_position) "
            f"VALUES (?, ?, ?, ?, 0) ON CONFLICT (tenant, group_key) "
            f"DO UPDATE SET n = kept.n + excluded.n, subjects = kept.subjects + excluded.subjects",
            [(*k, self._grouped[k], subjects[k]) for k in touched],
        )
        self._db.run_many(
            f"DELETE FROM {t.groups_table} WHERE tenant = ? AND group_key = ? AND n = 0",
            touched,
        )
        # The oldest item of a group that gained or lost items: one probe of its index.
        self._db.run_many(
            f"UPDATE {t.groups_table} SET first_position = coalesce((SELECT min(position) "
            f"FROM {t.items} WHERE tenant = ? AND group_key = ?), 0) "
            f"WHERE tenant = ? AND group_key = ?",
            [(*k, *k) for k in touched],
        )
        self._counted.clear()
        self._members.clear()
        self._grouped.clear()
        self._apply_combined()

    def subject(self, subject_id: str) -> SubjectRow | None:
        if subject_id not in self._subjects:
            row = self._db.run(
                f"SELECT subject_id, tenant, kind, external_ref FROM {self._t.subjects} "
                f"WHERE subject_id = ?",
                [subject_id],
            ).fetchone()
            self._subjects[subject_id] = None if row is None else SubjectRow(*map(str, row))
        return self._subjects[subject_id]

    def put_subject(self, row: SubjectRow) -> None:
        self.flush()
        self._subjects[row.subject_id] = row
        self._db.run(
            f"INSERT INTO {self._t.subjects} (subject_id, tenant, kind, external_ref, search) "
            f"VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject_id) "
            f"DO UPDATE SET tenant = excluded.tenant, kind = excluded.kind, "
            f"external_ref = excluded.external_ref, search = excluded.search",
            [row.subject_id, row.tenant, row.kind, row.external_ref, row.external_ref.lower()],
        )

    def session(self, subject_id: str, session_id: str) -> SessionRow | None:
        key = (subject_id, session_id)
        if key not in self._sessions:
            self._sessions[key] = self._read_session(subject_id, session_id)
        return self._sessions[key]

    def _read_session(self, subject_id: str, session_id: str) -> SessionRow | None:
        row = self._db.run(
            f"SELECT subject_id, session_id, conversation_type, said_at FROM {self._t.sessions} "
            f"WHERE subject_id = ? AND session_id = ?",
            [subject_id, session_id],
        ).fetchone()
        if row is None:
            return None
        return SessionRow(
            str(row[0]), str(row[1]), None if row[2] is None else str(row[2]), str(row[3])
        )

    def put_session(self, row: SessionRow) -> None:
        self.flush()
        self._sessions[row.subject_id, row.session_id] = row
        self._db.run(
            f"INSERT INTO {self._t.sessions} VALUES (?, ?, ?, ?) "
            f"ON CONFLICT (subject_id, session_id) DO UPDATE SET "
            f"conversation_type = excluded.conversation_type, said_at = excluded.said_at",
            [row.subject_id, row.session_id, row.conversation_type, row.said_at],
        )
        for found in self._db.run(
            f"SELECT {COUNTED_COLUMNS} FROM {self._t.items} "
            f"WHERE subject_id = ? AND session_id = ?",
            [row.subject_id, row.session_id],
        ).fetchall():
            tenant, before = str(found[0]), found[5]
            if before is not None:
                self._counted[tenant, "conversation_type", str(before)] -= 1
            if row.conversation_type is not None:
                self._counted[tenant, "conversation_type", row.conversation_type] += 1
            # The item moves between tuples: out under its old type, in under the new one.
            self._count_tuple(found, -1)
            moved = list(found)
            moved[5] = row.conversation_type
            self._count_tuple(moved, 1)
        self._db.run(
            f"UPDATE {self._t.items} SET said_at = ?, conversation_type = ? "
            f"WHERE subject_id = ? AND session_id = ?",
            [row.said_at, row.conversation_type, row.subject_id, row.session_id],
        )

    def add(self, row: ItemRow) -> None:
        self._count(
            (
                row.tenant,
                row.kind,
                row.field,
                row.origin,
                row.proposer,
                row.conversation_type,
                row.group_key,
                row.subject_id,
                row.proposed_key,
            ),
            1,
        )
        self._adds.append(
            (
                row.tenant,
                row.position,
                row.subject_id,
                row.change_id,
                row.field,
                row.origin,
                row.proposer,
                row.proposed_key,
                row.kind,
                row.external_ref,
                row.group_key,
                row.session_id,
                row.said_at,
                row.conversation_type,
                dumps_sorted(row.doc),
                search_text(row.field, row.external_ref),
            )
        )

    def doc(self, subject_id: str, change_id: str) -> JsonObject | None:
        self.flush()
        row = self._db.run(
            f"SELECT doc FROM {self._t.items} WHERE subject_id = ? AND change_id = ?",
            [subject_id, change_id],
        ).fetchone()
        if row is None:
            return None
        doc = loads(str(row[0]))
        return doc if isinstance(doc, dict) else None

    def put_doc(self, subject_id: str, change_id: str, doc: JsonObject) -> None:
        self.flush()
        self._db.run(
            f"UPDATE {self._t.items} SET doc = ? WHERE subject_id = ? AND change_id = ?",
            [dumps_sorted(doc), subject_id, change_id],
        )

    def remove(self, subject_id: str, change_id: str) -> None:
        self.flush()
        for found in self._db.run(
            f"DELETE FROM {self._t.items} WHERE subject_id = ? AND change_id = ? "
            f"RETURNING {COUNTED_COLUMNS}",
            [subject_id, change_id],
        ).fetchall():
            self._count(found, -1)

    def erase(self, subject_id: str) -> None:
        self.flush()
        self._subjects.pop(subject_id, None)
        self._sessions = {k: v for k, v in self._sessions.items() if k[0] != subject_id}
        for found in self._db.run(
            f"DELETE FROM {self._t.items} WHERE subject_id = ? RETURNING {COUNTED_COLUMNS}",
            [subject_id],
        ).fetchall():
            self._count(found, -1)
        # Its subject row goes, and with it the pending count those changes were made to;
        # a subject registered again in this transaction starts from none.
        self._pending.pop(subject_id, None)
        for table in (self._t.sessions, self._t.subjects):
            self._db.run(f"DELETE FROM {table} WHERE subject_id = ?", [subject_id])


class SqlQueueStore(ABC):
    """The reads both stores answer alike, each through its own `_reading` (a connection and
    the snapshot rules of its database)."""

    name: str
    _tables: QueueTables

    def __init__(self) -> None:
        # The filters' choices by tenant, with the store's position they were read at: they
        # change only when the queue does, and are read on every page.
        self._choices: dict[str, tuple[int, QueueChoices]] = {}
        self._choices_lock = threading.Lock()

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Runner]: ...

    def position(self) -> int:
        with self._reading() as db:
            return self._tables.read_position(db, self.name)

    def page(self, tenant: str, where: QueueFilter, cursor: QueueCursor, limit: int) -> RowPage:
        with self._reading() as db:
            return self._tables.page(db, tenant, where, cursor, limit)

    def groups(self, tenant: str, where: QueueFilter, *, offset: int, limit: int) -> RowGroups:
        with self._reading() as db:
            return self._tables.groups(db, tenant, where, offset=offset, limit=limit)

    def select(self, tenant: str, where: QueueFilter, *, limit: int) -> list[Selected]:
        with self._reading() as db:
            return self._tables.select(db, tenant, where, limit=limit)

    def choices(self, tenant: str) -> QueueChoices:
        with self._reading() as db:
            # Read first: choices read after it are at least as new, so keeping them under
            # this position never keeps older ones.
            position = self._tables.read_position(db, self.name)
            with self._choices_lock:
                kept = self._choices.get(tenant)
            if kept is not None and kept[0] == position:
                return kept[1]
            found = self._tables.choices(db, tenant)
        with self._choices_lock:
            self._choices[tenant] = (position, found)
        return found
