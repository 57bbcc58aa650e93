"""Exact counts of the review queue's combined filters, ages and text searches, read from
counters the projection keeps rather than counted over the rows on every page view.

- **Tuples.** Every pending item is counted under its full filter tuple (tenant, subject kind,
  field, origin, proposer, conversation type) in `review_queue_tuples`. Those are small
  domains: a queue of 100,000 items over 10,000 subjects has a few hundred tuples, so any
  combination of those filters is a sum over the few tuples it matches.
- **Ages.** The same tuples per day of recording (`review_queue_tuple_days`, the day being
  the first eight characters of the item's `proposed_key`). An age bound falls inside one
  day: the days wholly on its side are summed from the counters and that one boundary day's
  items are counted over the rows (one day's items, by the age index).
- **Text.** The search matches field names or subject references. Its count is the items of
  the matching fields (the tuples again, with `field IN (...)`) plus the items of the matching
  subjects in other fields. Each subject keeps its number of pending items (`pending` on
  `review_queue_subjects`), so a text search alone sums the matching subjects' counters (a
  scan of the subjects, a row each, never of the items); with other filters, or when the text
  also names a field, the matching subjects' own items are counted (bounded by those
  subjects' pending items).

Groups combined with other filters, one subject's items and a bound on positions are still
counted over the rows: each is bounded by an index range of its own (a group's items, a
subject's items) or is a decision's selection rather than a page view.
"""

# Statements are built from the code's own table and column names; every value is a parameter.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Protocol

from factledger.application.review_queue.ports import time_key
from factledger.application.review_queue.queue import QueueFilter

# A row's counted tuple, in the counters' key order after the tenant.
TUPLE = ("kind", "field", "origin", "proposer", "conversation_type")
# A conversation without a type, in a counter's key (a key column cannot be NULL). A filter
# asking for the empty type is counted over the rows, where NULL and "" differ.
NO_TYPE = ""
DAY = 8  # the characters of a `time_key` that name its day (YYYYMMDD)


def combined_statements(prefix: str, *, text: str = "TEXT") -> tuple[str, ...]:
    """The tuples' and days' counters and each subject's pending items, filled from the rows
    so that an existing database's counts are exact on its first start."""
    t = f"{prefix}review_queue"
    keyed = ", ".join(f"{c} {text} NOT NULL" for c in TUPLE)
    key = ", ".join(TUPLE)
    selected = f"kind, field, origin, proposer, coalesce(conversation_type, '{NO_TYPE}')"
    return (
        f"CREATE TABLE IF NOT EXISTS {t}_tuples (tenant {text} NOT NULL, {keyed}, "
        f"n BIGINT NOT NULL, PRIMARY KEY (tenant, {key}))",
        f"CREATE TABLE IF NOT EXISTS {t}_tuple_days (tenant {text} NOT NULL, day {text} NOT NULL, "
        f"{keyed}, n BIGINT NOT NULL, PRIMARY KEY (tenant, day, {key}))",
        f"ALTER TABLE {t}_subjects ADD COLUMN pending BIGINT NOT NULL DEFAULT 0",
        f"DELETE FROM {t}_tuples",
        f"DELETE FROM {t}_tuple_days",
        f"INSERT INTO {t}_tuples (tenant, {key}, n) SELECT tenant, {selected}, count(*) "
        f"FROM {t}_items GROUP BY tenant, {selected}",
        f"INSERT INTO {t}_tuple_days (tenant, day, {key}, n) "
        f"SELECT tenant, substr(proposed_key, 1, {DAY}), {selected}, count(*) "
        f"FROM {t}_items GROUP BY tenant, substr(proposed_key, 1, {DAY}), {selected}",
        f"UPDATE {t}_subjects SET pending = (SELECT count(*) FROM {t}_items i "
        f"WHERE i.subject_id = {t}_subjects.subject_id)",
    )


def tuple_key(
    kind: object, field: object, origin: object, proposer: object, conversation_type: object
) -> tuple[str, str, str, str, str]:
    return (
        str(kind),
        str(field),
        str(origin),
        str(proposer),
        NO_TYPE if conversation_type is None else str(conversation_type),
    )


def day_of(proposed_key: str) -> str:
    return proposed_key[:DAY]


def _next_day(day: str) -> str:
    following = date(int(day[:4]), int(day[4:6]), int(day[6:8])) + timedelta(days=1)
    return following.strftime("%Y%m%d")


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


class CombinedCounts:
    """The count statements over one set of tables (`prefix` as in `combined_statements`).

    `rows_where(tenant, where)` is the items' own WHERE clause for a filter without text (the
    stores' `where_clause`), used for the boundary day and the matching subjects' items."""

    def __init__(self, prefix: str) -> None:
        t = f"{prefix}review_queue"
        self.tuples, self.days = f"{t}_tuples", f"{t}_tuple_days"
        self.items, self.subjects = f"{t}_items", f"{t}_subjects"

    def count(
        self,
        tenant: str,
        where: QueueFilter,
        fields: Sequence[str],
        rows_where: _RowsWhere,
    ) -> tuple[str, list[object]] | None:
        """The filter's exact count as a scalar SQL expression, or None when it is counted
        over the rows (a group with other filters, one subject, a position bound, a text with
        a line break (matched against each row's `search`), the empty conversation type).
        `fields`: the tenant's field names that hold the text."""
        if (
            where.group is not None
            or where.subject_id is not None
            or where.up_to is not None
            or where.conversation_type == NO_TYPE
            or (where.text is not None and "\n" in where.text)
        ):
            return None
        plain = QueueFilter(
            kind=where.kind,
            field=where.field,
            origin=where.origin,
            proposer=where.proposer,
            conversation_type=where.conversation_type,
            proposed_before=where.proposed_before,
            proposed_after=where.proposed_after,
        )
        if not where.text:
            return self._tuples(tenant, plain, None, rows_where)
        by_field: tuple[str, list[object]] = ("0", [])
        if fields:
            by_field = self._tuples(tenant, plain, fields, rows_where)
        by_subject = self._subjects(tenant, plain, where.text, fields, rows_where)
        return f"({by_field[0]} + {by_subject[0]})", [*by_field[1], *by_subject[1]]

    def _tuples(
        self,
        tenant: str,
        plain: QueueFilter,
        fields: Sequence[str] | None,
        rows_where: _RowsWhere,
    ) -> tuple[str, list[object]]:
        """Items matching `plain` (and, given `fields`, in one of them): a sum of tuples;
        with an age, of the days wholly inside it plus the boundary days' items."""
        conditions: list[str] = ["tenant = ?"]
        args: list[object] = [tenant]
        for column, value in _equalities(plain):
            conditions.append(f"{column} = ?")
            args.append(value)
        if fields is not None:
            conditions.append(f"field IN ({_marks(fields)})")
            args.extend(fields)
        before, after = plain.proposed_before, plain.proposed_after
        if before is None and after is None:
            return (
                f"coalesce((SELECT sum(n) FROM {self.tuples} WHERE {' AND '.join(conditions)}), 0)",
                args,
            )
        # Days wholly inside the bounds: after the day `after` falls in, before the day
        # `before` falls in.
        days, day_args = list(conditions), list(args)
        edges: list[str] = []
        edge_args: list[object] = []
        if before is not None:
            days.append("day < ?")
            day_args.append(day_of(time_key(before)))
            edges.append("proposed_key >= ?")
            edge_args.append(day_of(time_key(before)))
        if after is not None:
            days.append("day > ?")
            day_args.append(day_of(time_key(after)))
            edges.append("proposed_key < ?")
            edge_args.append(_next_day(day_of(time_key(after))))
        clause, clause_args = rows_where(tenant, plain)
        if fields is not None:
            clause += f" AND field IN ({_marks(fields)})"
            clause_args = [*clause_args, *fields]
        # The boundary days' items (both bounds may fall in one day: the OR counts it once).
        return (
            f"(coalesce((SELECT sum(n) FROM {self.days} WHERE {' AND '.join(days)}), 0) + "
            f"(SELECT count(*) FROM {self.items} WHERE {clause} AND ({' OR '.join(edges)})))",
            [*day_args, *clause_args, *edge_args],
        )

    def _subjects(
        self,
        tenant: str,
        plain: QueueFilter,
        text: str,
        fields: Sequence[str],
        rows_where: _RowsWhere,
    ) -> tuple[str, list[object]]:
        """Items of the subjects whose reference holds the text, in fields that do not."""
        matching = (
            f"SELECT subject_id FROM {self.subjects} WHERE tenant = ? AND search LIKE ? ESCAPE '\\'"
        )
        if plain.is_empty() and not fields:
            # Every item of those subjects: their counters, summed over a scan of the subjects.
            return (
                f"coalesce((SELECT sum(pending) FROM {self.subjects} WHERE tenant = ? "
                f"AND search LIKE ? ESCAPE '\\'), 0)",
                [tenant, like(text)],
            )
        clause, args = rows_where(tenant, plain)
        if fields:
            clause += f" AND field NOT IN ({_marks(fields)})"
            args = [*args, *fields]
        return (
            f"(SELECT count(*) FROM {self.items} WHERE {clause} AND subject_id IN ({matching}))",
            [*args, tenant, like(text)],
        )


class _RowsWhere(Protocol):
    """The shape of `where_clause` without text: (clause, args) of a filter over the items."""

    def __call__(self, tenant: str, where: QueueFilter) -> tuple[str, list[object]]: ...


def _equalities(where: QueueFilter) -> list[tuple[str, str]]:
    found = (
        ("kind", where.kind),
        ("field", where.field),
        ("origin", None if where.origin is None else where.origin.value),
        ("proposer", where.proposer),
        ("conversation_type", where.conversation_type),
    )
    return [(column, value) for column, value in found if value is not None]


def like(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, lower-cased, its wildcards escaped."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
