"""`GroupCommitRecorder`: the library's PostgreSQL application recorder, its saves batched.

Saves from the threads of one process go through `GroupCommit`: one transaction takes the
table lock the library relies on (notification ids in commit order), sends one `NOTIFY`,
inserts every unit's events in one statement and commits once.

- The insert skips rows that collide (`ON CONFLICT DO NOTHING ... RETURNING`): a unit whose
  events did not all go in (another writer took a version first) gets the library's
  `IntegrityError`, as from its own insert, and the rows it did insert are deleted again in
  the same transaction, so a subject's versions stay dense. Their notification ids are
  skipped; readers already page by id, never by count.
- A save may pass `response=` (`ResponseWrite`): the request's response goes into the
  idempotency table of the same schema in the events' transaction.
- A save may pass `in_transaction=` (`Callable[[cursor, notification ids], None]`): run in the
  same transaction right after its events are in, so whatever it writes commits with them
  or not at all (the idempotency record). One that raises before its statement
  fails its own unit only (its events are deleted again); a failed statement loses the
  transaction, and so the batch.
- The channel is named after the schema as well as the table, so ledgers in two schemas of
  one database do not wake each other's workers.
- A save with a tracking record (the library's process applications; the ledger has none)
  keeps the library's own one-transaction path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import psycopg
from eventsourcing.persistence import IntegrityError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Composed, Identifier
from psycopg.types.json import Jsonb

from factledger.adapters.postgres.group_commit import GroupCommit
from factledger.adapters.postgres.idempotency_store import COMPLETE
from factledger.adapters.postgres.schemas import SchemaLockedTables
from factledger.application.ledger.responses import ResponseWrite

InTransaction = Callable[[Cursor[DictRow], Sequence[int]], None]
Work = tuple[Sequence[StoredEvent], InTransaction | None]
_MAX_CHANNEL = 63  # PostgreSQL truncates longer identifiers: keep the name's end, the table


def commit_channel_name(schema: str, table: str) -> str:
    """The `NOTIFY` channel of the events table `table` in `schema`."""
    name = f"{schema}_{table}"
    return name if len(name) <= _MAX_CHANNEL else name[-_MAX_CHANNEL:]


class GroupCommitRecorder(SchemaLockedTables, PostgresApplicationRecorder):
    """The library's recorder; `insert_events` goes through one `GroupCommit` per recorder."""

    def __init__(
        self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
    ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.channel_name = commit_channel_name(datastore.schema, events_table_name)
        table = (Identifier(datastore.schema), Identifier(events_table_name))
        self._lock_and_notify = SQL(
            "SET LOCAL lock_timeout = '{lock}s'; LOCK TABLE {0}.{1} IN EXCLUSIVE MODE;"
            " NOTIFY {channel}"
        ).format(*table, lock=datastore.lock_timeout, channel=Identifier(self.channel_name))
        self._insert_batch = SQL(
            "INSERT INTO {0}.{1} (originator_id, originator_version, topic, state)"
            " SELECT originator_id, originator_version, topic, state"
            " FROM unnest(%s::{0}.{type}[]) ON CONFLICT DO NOTHING"
            " RETURNING originator_id, originator_version, notification_id"
        ).format(*table, type=Identifier(self.stored_event_type_name))
        self._delete_ids: Composed = SQL(
            "DELETE FROM {0}.{1} WHERE notification_id = ANY(%s)"
        ).format(*table)
        self._complete = SQL(COMPLETE).format(schema=Identifier(datastore.schema))
        self.group: GroupCommit[Work] = GroupCommit(
            self._run_batch, name=f"ledger-group-commit-{datastore.schema}"
        )

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        if kwargs.get("tracking") is not None:
            return cast("Sequence[int] | None", super().insert_events(stored_events, **kwargs))
        if not stored_events:
            return []
        hook: InTransaction | None = kwargs.get("in_transaction")
        response = kwargs.get("response")
        if isinstance(response, ResponseWrite):
            hook = self._writing_response(response, hook)
        keys = frozenset(e.originator_id for e in stored_events)
        return cast("list[int]", self.group.submit(keys, (stored_events, hook)))

    def close(self) -> None:
        self.group.close()

    def _writing_response(
        self, response: ResponseWrite, then: InTransaction | None
    ) -> InTransaction:
        """Saves the request's response in the idempotency table of this schema (the
        PostgreSQL idempotency store's), in the events' transaction."""

        def write(curs: Cursor[DictRow], ids: Sequence[int]) -> None:
            pending = response.pending
            scope = pending.scope
            curs.execute(
                self._complete,
                (
                    Jsonb(response.body(ids)),
                    pending.expires_at,
                    scope.tenant,
                    scope.principal,
                    scope.subject_id,
                    scope.key,
                    pending.fingerprint,
                ),
            )
            response.executed = True
            if then is not None:
                then(curs, ids)

        return write

    def _run_batch(self, works: Sequence[Work]) -> list[object]:
        rows = [
            self.construct_pg_stored_event(e.originator_id, e.originator_version, e.topic, e.state)
            for events, _ in works
            for e in events
        ]
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(self._lock_and_notify)
            curs.execute(self._insert_batch, (rows,), prepare=True)
            issued = {
                (r["originator_id"], r["originator_version"]): r["notification_id"]
                for r in curs.fetchall()
            }
            outcomes, burned = _outcomes(works, issued)
            for index, (_, hook) in enumerate(works):
                ids = outcomes[index]
                if hook is None or not isinstance(ids, list):
                    continue
                try:
                    hook(curs, ids)
                except psycopg.Error:
                    raise  # the transaction is lost: the whole batch fails
                except Exception as exc:
                    # Failed before its statement ran: only this unit's events go again.
                    outcomes[index] = exc
                    burned.extend(ids)
            if burned:
                curs.execute(self._delete_ids, (burned,))
        return outcomes


def _outcomes(
    works: Sequence[Work], issued: dict[tuple[Any, int], int]
) -> tuple[list[object], list[int]]:
    """Each unit's notification ids, or an `IntegrityError` when any of its events collided;
    the ids of the rows such units did insert, to delete."""
    outcomes: list[object] = []
    burned: list[int] = []
    for events, _ in works:
        ids = [issued.get((e.originator_id, e.originator_version)) for e in events]
        present = [i for i in ids if i is not None]
        if len(present) == len(ids):
            outcomes.append(present)
        else:
            burned.extend(present)
            outcomes.append(IntegrityError("an event's version is taken already"))
    return outcomes, burned
