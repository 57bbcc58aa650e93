"""Reading the event streams of several subjects at once, each after a version of its own.

A recorder that can (`ManyStreams`: the PostgreSQL ledger's) reads them in one statement;
any other reads one stream per call, a few side by side, in the caller's context (its log
context and whether it may read a standby travel with it).
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, runtime_checkable
from uuid import UUID

from eventsourcing.persistence import AggregateRecorder, StoredEvent

# Streams read side by side by a recorder that reads one per statement: a few at a time keep
# its pool free for other requests.
STREAMS_AT_ONCE = 4


@runtime_checkable
class ManyStreams(Protocol):
    def select_streams(self, after: Mapping[UUID, int]) -> dict[UUID, list[StoredEvent]]:
        """Each stream's events after the version given for it (0: all), oldest first; a
        stream with none is absent."""
        ...


def select_streams(
    recorder: AggregateRecorder, after: Mapping[UUID, int]
) -> dict[UUID, list[StoredEvent]]:
    """Each stream's events after the version given for it (0: all), oldest first; a stream
    with none is absent."""
    if isinstance(recorder, ManyStreams):
        return recorder.select_streams(after)
    context = contextvars.copy_context()

    def read(subject_id: UUID) -> list[StoredEvent]:
        gt = after[subject_id] or None
        return list(context.copy().run(recorder.select_events, subject_id, gt=gt))

    ids = list(after)
    if len(ids) < 2:
        streams = {sid: read(sid) for sid in ids}
    else:
        with ThreadPoolExecutor(min(STREAMS_AT_ONCE, len(ids))) as pool:
            streams = dict(zip(ids, pool.map(read, ids), strict=True))
    return {sid: events for sid, events in streams.items() if events}
