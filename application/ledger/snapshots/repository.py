"""`SnapshottingRepository`: a subject's latest state from its newest usable snapshot plus the
events after it; from its whole stream when there is no usable snapshot.

A first load reads the head of the stream before it asks the snapshot store: a stream shorter
than the interval has never crossed a multiple of it, so no snapshot of it can be newer than
its start, and its few events are the whole answer in one round trip (most subjects a process
meets are such; a recall's first turn waits for this read). A longer stream's head is left
undecoded, and the load goes on from the newest snapshot as before.

A snapshot is a cache, so anything wrong with it costs a replay, never an answer: a missing,
damaged, forgotten or differently shaped one, a snapshot store that fails, and a snapshot
followed by a field's forget or the subject's erasure (taken before the forget, so it may hold
what was forgotten: its key is deleted again, in case it was written after the forget's own
deletion). Loads of an older version (`version=`) never use snapshots.
"""

from __future__ import annotations

import contextlib
from typing import Any
from uuid import UUID

import structlog
from eventsourcing.application import AggregateNotFoundError, ProjectorFunction, Repository
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import PersistenceError

from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.snapshots.codec import UnreadableSnapshotError
from factledger.application.ledger.snapshots.store import RestoredState, SubjectSnapshots
from factledger.domain.events import FactForgotten, SubjectErased
from factledger.domain.subject import Subject

log = structlog.get_logger(__name__)


class SnapshottingRepository(Repository[UUID]):
    """The library's repository (cache, fast-forward) with bounded first loads."""

    def __init__(self, *args: Any, snapshots: SubjectSnapshots | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.snapshots = snapshots

    def _reconstruct_aggregate(
        self,
        aggregate_id: UUID,
        version: int | None,
        projector_func: ProjectorFunction[Any, Any],
    ) -> Any:
        if version is not None or self.snapshots is None:
            return super()._reconstruct_aggregate(aggregate_id, version, projector_func)
        whole = self._short_stream(aggregate_id, self.snapshots.interval)
        if whole is not None:
            replayed = projector_func(None, whole)
            if replayed is None:  # no events: no such subject
                raise AggregateNotFoundError(f"Aggregate {aggregate_id!r} version None not found.")
            return replayed
        restored = self._usable_snapshot(aggregate_id)
        if restored is None:
            return super()._reconstruct_aggregate(aggregate_id, None, projector_func)
        tail = list(self.event_store.get(originator_id=aggregate_id, gt=restored.version))
        if any(_outdates_snapshot(event) for event in tail):
            log.info("ledger.snapshot_outdated", subject_id=str(aggregate_id))
            # Best effort: this load does not need the key gone, and the next one tries again.
            with contextlib.suppress(StoreUnavailableError):
                self.snapshots.forget(aggregate_id)
            return super()._reconstruct_aggregate(aggregate_id, None, projector_func)
        subject = object.__new__(Subject)
        subject.__dict__.update(restored.state)
        subject.__dict__["_pending_events"] = []
        aggregate = projector_func(subject, tail)
        if aggregate is None:  # pragma: no cover - a snapshot always yields a subject
            raise AggregateNotFoundError(aggregate_id)
        return aggregate

    def _short_stream(
        self, subject_id: UUID, interval: int
    ) -> list[DomainEventProtocol[UUID]] | None:
        """The subject's whole stream, decoded, when it holds fewer than `interval` events
        (none: no such subject); None when it is long enough to have a snapshot."""
        head = self.event_store.recorder.select_events(subject_id, limit=interval)
        if len(head) >= interval:
            return None
        return [self.event_store.mapper.to_domain_event(stored) for stored in head]

    def _usable_snapshot(self, subject_id: UUID) -> RestoredState | None:
        assert self.snapshots is not None  # noqa: S101 - checked by the caller
        try:
            return self.snapshots.latest(subject_id)
        except UnreadableSnapshotError as exc:
            log.info("ledger.snapshot_unreadable", subject_id=str(subject_id), why=str(exc))
        except (PersistenceError, StoreUnavailableError):
            # The stream's own read reports the outage (503) if the database is really down.
            log.warning("ledger.snapshot_store_failed", subject_id=str(subject_id))
        return None


def _outdates_snapshot(event: DomainEventProtocol[UUID]) -> bool:
    # Every forget takes words a snapshot before it may hold: a field's, or the lines of a
    # memory or of a request to forget what was said (ADR 0174).
    return isinstance(event, FactForgotten | SubjectErased)
