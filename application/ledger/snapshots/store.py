"""`SubjectSnapshots`: takes and reads sealed snapshots in the library's snapshot table.

The table is the library's own (`stored_snapshots` in the SQLite file, `ledger_snapshots` in
the PostgreSQL schema, a dict on POPO), written through its aggregate recorder: one row per
(subject, version), beside the events and never in the notification log, so projections and
rebuilds never see a snapshot.

What is never snapshotted: an erased subject, and one with a forgotten field. Its state may
still hold a forgotten field's words in memory (a process that loaded it before the key went
keeps them until its cache lets go), and a snapshot must be what a replay from the store
gives after the forget; such a subject loads from its stream, as before.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import structlog
from eventsourcing.persistence import AggregateRecorder, StoredEvent

from factledger.application.ledger.ports import KeyStore, PrunesOlder
from factledger.application.ledger.snapshots.codec import seal, snapshot_scope, unseal
from factledger.domain.subject import Subject

TOPIC = "factledger.subject.snapshot"
DEFAULT_INTERVAL = 100
log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RestoredState:
    version: int
    state: dict[str, Any]


def is_due(interval: int, *, before: int, after: int) -> bool:
    """Whether a save that took a subject from version `before` to `after` crossed a multiple
    of the interval (a save may append several events at once)."""
    return interval > 0 and after // interval > before // interval


def is_snapshottable(subject: Subject) -> bool:
    """Not once anything of the subject was forgotten: a copy taken with the forget still held
    the words in memory, and might be sealed after the forget deleted the keys. A field's
    forget and a request to forget what was said leave a mark; a memory's, its id."""
    return not subject.erased and not subject.forget_marks and not subject.forgotten_memories


class SubjectSnapshots:
    """Sealed snapshots of subjects, every `interval` events (0: never).

    `take_later` seals on one worker thread, off the saving request's path: sealing a large
    state costs up to a few hundred ms (docs/benchmarks.md), which one save in `interval`
    would otherwise add to its answer. The worker gets its own copy of the subject (its
    containers; their values are immutable), so nothing the request does afterwards reaches it.
    """

    def __init__(self, recorder: AggregateRecorder, keys: KeyStore, *, interval: int) -> None:
        self.recorder = recorder
        self.keys = keys
        self.interval = interval
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-snapshots")

    def take_later(self, subject: Subject) -> None:
        """Queues a snapshot of the subject as it is now; failures are logged, never raised."""
        if is_snapshottable(subject):
            self._worker.submit(self._take_logged, copy.deepcopy(subject))

    def flush(self) -> None:
        """Waits for the snapshots queued so far (the worker takes them in order)."""
        self._worker.submit(lambda: None).result()

    def close(self) -> None:
        """Writes what is queued, then stops the worker (before the store's pool closes)."""
        self._worker.shutdown(wait=True)

    def _take_logged(self, subject: Subject) -> None:
        try:
            self.take(subject)
        except Exception as error:  # a snapshot is a cache: a failure only costs a replay
            log.warning(
                "ledger.snapshot_failed",
                subject_id=str(subject.id),
                version=subject.version,
                error_type=type(error).__name__,
            )

    def take(self, subject: Subject) -> bool:
        """Stores the subject's state at its version; False when it must not be stored."""
        if not is_snapshottable(subject):
            return False
        blob = seal(vars(subject), subject.id, subject.version, self.keys)
        row = StoredEvent(
            originator_id=subject.id,
            originator_version=subject.version,
            topic=TOPIC,
            state=blob,
        )
        self.recorder.insert_events([row])
        if isinstance(self.recorder, PrunesOlder):
            # Only the newest is ever read; the older ones would be a copy of the state per
            # `interval` events, hundreds of kB each for a long history.
            self.recorder.delete_older(subject.id, subject.version)
        log.info("ledger.snapshot_taken", subject_id=str(subject.id), version=subject.version)
        return True

    def latest(self, subject_id: UUID) -> RestoredState | None:
        """The newest snapshot's state; `UnreadableSnapshotError` when it cannot be used."""
        rows = self.recorder.select_events(subject_id, desc=True, limit=1)
        if not rows:
            return None
        row = rows[0]
        state = unseal(bytes(row.state), subject_id, row.originator_version, self.keys)
        return RestoredState(row.originator_version, state)

    def forget(self, subject_id: UUID) -> int:
        """Makes every snapshot of the subject unreadable for good (its key goes)."""
        return self.keys.forget(snapshot_scope(subject_id))
