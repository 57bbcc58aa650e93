"""Reading the whole event streams of several subjects at once.

A recorder that can (`ManyStreams`: the PostgreSQL ledger's) reads them in one statement;
any other reads one stream per call, a few side by side, in the caller's context (its log
context and whether it may read a standby travel with it).
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, StoredEvent

# Streams read side by side by a recorder that reads one per statement: a few at a time keep
# its pool free for other requests.
STREAMS_AT_ONCE = 4


@runtime_checkable
class ManyStreams(Protocol):
    def select_streams(self, originator_ids: Sequence[UUID]) -> dict[UUID, list[StoredEvent]]:
        """Every event of each stream, oldest first; a stream with no events is absent."""
        ...


def select_streams(
    recorder: ApplicationRecorder, originator_ids: Sequence[UUID]
) -> dict[UUID, list[StoredEvent]]:
    """Every event of each of `originator_ids`' streams, oldest first; absent when none."""
    ids = list(dict.fromkeys(originator_ids))
    if isinstance(recorder, ManyStreams):
        return recorder.select_streams(ids)
    if len(ids) < 2:
        return {sid: list(events) for sid in ids if (events := recorder.select_events(sid))}
    context = contextvars.copy_context()

    def read(subject_id: UUID) -> list[StoredEvent]:
        return list(context.copy().run(recorder.select_events, subject_id))

    with ThreadPoolExecutor(min(STREAMS_AT_ONCE, len(ids))) as pool:
        streams = dict(zip(ids, pool.map(read, ids), strict=True))
    return {sid: events for sid, events in streams.items() if events}
