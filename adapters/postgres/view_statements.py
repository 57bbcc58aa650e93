"""The SQL of one projection's views in PostgreSQL, shared by a view transaction that commits
in turn (`view_store`) and by one that commits behind the next page (`view_write_behind`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import psycopg
from psycopg import sql

from factledger.adapters.view_buffer import LoadOne, LoadPrefix, Writes

Conn = psycopg.Connection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class ViewStatements:
    """Statements on `{schema}.view_documents` and `{schema}.view_tracking` for `name`."""

    name: str
    tracking: sql.Composed
    docs: sql.Composed

    @classmethod
    def of(cls, schema: str, name: str) -> ViewStatements:
        ident = sql.Identifier(schema)
        return cls(
            name,
            sql.SQL("{}.view_tracking").format(ident),
            sql.SQL("{}.view_documents").format(ident),
        )

    def load_one(self, conn: Conn) -> LoadOne:
        query = sql.SQL(
            "SELECT doc::text FROM {} WHERE projection=%s AND view=%s AND key=%s"
        ).format(self.docs)

        def load(view: str, key: str) -> str | None:
            row = conn.execute(query, (self.name, view, key)).fetchone()
            return None if row is None else str(row[0])

        return load

    def load_prefix(self, conn: Conn) -> LoadPrefix:
        query = sql.SQL(
            "SELECT key, doc::text FROM {} WHERE projection=%s AND view=%s "
            "AND left(key, %s) = %s ORDER BY key"
        ).format(self.docs)

        def load(view: str, prefix: str) -> list[tuple[str, str]]:
            rows = conn.execute(query, (self.name, view, len(prefix), prefix)).fetchall()
            return [(str(key), str(doc)) for key, doc in rows]

        return load

    def lock_position(self, conn: Conn) -> int:
        """Takes the tracking row's lock and reads the position, in one round trip."""
        with conn.pipeline():
            # No wait for the WAL's flush at commit: a server crash can take back the last
            # commits of the views, documents and position together, and the projection then
            # replays those events from the ledger (whose commits keep waiting).
            conn.execute("SET LOCAL synchronous_commit = off")
            conn.execute(
                sql.SQL("INSERT INTO {} VALUES (%s, 0) ON CONFLICT DO NOTHING").format(
                    self.tracking
                ),
                (self.name,),
            )
            cur = conn.execute(
                sql.SQL("SELECT position FROM {} WHERE projection=%s FOR UPDATE").format(
                    self.tracking
                ),
                (self.name,),
            )
        row = cur.fetchone()
        return int(cast("int", row[0])) if row else 0

    def read_position(self, conn: Conn) -> int:
        row = conn.execute(
            sql.SQL("SELECT position FROM {} WHERE projection=%s").format(self.tracking),
            (self.name,),
        ).fetchone()
        return 0 if row is None else int(cast("int", row[0]))

    def store_position(self, conn: Conn, old: int, new: int) -> psycopg.Cursor[tuple[object, ...]]:
        """Moves the position from `old` to `new`; the cursor's rowcount is 0 when it was not
        at `old`."""
        return conn.execute(
            sql.SQL("UPDATE {} SET position=%s WHERE projection=%s AND position=%s").format(
                self.tracking
            ),
            (new, self.name, old),
        )

    def write(self, conn: Conn, writes: Writes) -> None:
        """A transaction's writes in two statements at most, each taking its rows as arrays
        (`unnest`): a round trip per document was most of a page, and a pipelined statement
        per document still cost psycopg's Python a third of a rebuild's CPU. Each key is
        written once per statement (the buffer keeps a document's last state), which
        ON CONFLICT DO UPDATE requires."""
        if writes.deletes:
            views, keys = (list(column) for column in zip(*writes.deletes, strict=True))
            conn.execute(
                sql.SQL(
                    "DELETE FROM {} WHERE projection = %s AND (view, key) IN "
                    "(SELECT * FROM unnest(%b::text[], %b::text[]))"
                ).format(self.docs),
                (self.name, views, keys),
            )
        if writes.puts:
            views, keys, texts = (list(column) for column in zip(*writes.puts, strict=True))
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} SELECT %s, v, k, d::jsonb "
                    "FROM unnest(%b::text[], %b::text[], %b::text[]) AS t(v, k, d) "
                    "ON CONFLICT (projection, view, key) DO UPDATE SET doc = excluded.doc"
                ).format(self.docs),
                (self.name, views, keys, texts),
            )
