"""`ResponseWritingRecorder`: the library's SQLite application recorder, which also writes a
command's saved response in the transaction of its events (as on PostgreSQL), so a
retried command finds its answer exactly when its events exist.

- A save may pass `response=` (`ResponseWrite`): once the events are inserted (and have their
  notification ids), the body is rendered and written to the `idempotency_keys` table of the
  ledger's own file (`SAVE_WITH_EVENTS`, the idempotency store's); the library's
  transaction then commits both, or neither. A render that raises rolls the events back too.
  The key's claim stays in the idempotency file, which reads this table before it claims.
- The table is created with the events' table, so a ledger that the API never opened still
  has it; the idempotency store creates it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

from factledger.adapters.sqlite.idempotency_store import (
    EXPIRY_INDEX,
    SAVE_WITH_EVENTS,
    SCHEMA,
    scope_values,
)
from factledger.application.ledger.responses import ResponseWrite


class ResponseWritingRecorder(SQLiteApplicationRecorder):
    """The library's recorder; `response=` commits the request's response with its events."""

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(), SCHEMA, EXPIRY_INDEX]

    def _insert_events(
        self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        ids = super()._insert_events(c, stored_events, **kwargs)
        response = kwargs.get("response")
        if isinstance(response, ResponseWrite) and ids:
            pending = response.pending
            body = json.dumps(response.body(ids))
            c.execute(
                SAVE_WITH_EVENTS,
                (*scope_values(pending.scope), pending.fingerprint, body, pending.expires_at),
            )
            response.executed = True
        return ids
