"""The ledger's SQLite factory: the library's, with a snapshot recorder that deletes a
subject's older snapshots once a newer one is stored.

Only the newest snapshot of a subject is ever read; without this a subject kept one sealed
copy of its whole state per `interval` events (hundreds of kB each for a long history).
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.sqlite import SQLiteAggregateRecorder, SQLiteFactory


class PruningSQLiteAggregateRecorder(SQLiteAggregateRecorder):
    def delete_older(self, originator_id: UUID, version: int) -> int:
        """Deletes the originator's rows below `version`; returns how many."""
        statement = (
            f"DELETE FROM {self.events_table_name} "  # noqa: S608 (the library's own table name)
            "WHERE originator_id = ? AND originator_version < ?"
        )
        with self.datastore.transaction(commit=True) as c:
            c.execute(statement, (originator_id.hex, version))
            return int(c.sqlite_cursor.rowcount)


class LedgerSQLiteFactory(SQLiteFactory):
    aggregate_recorder_class = PruningSQLiteAggregateRecorder


FACTORY_TOPIC = f"{__name__}:{LedgerSQLiteFactory.__qualname__}"
