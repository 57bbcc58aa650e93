"""Followers: feed a processor the ledger's events in order, from the position it tracks.

This is the one mechanism every read side uses (the profile views here, the sync worker to
the memory backend). It polls the application's notification log, so it works the same on
POPO, SQLite (which has no subscriptions) and PostgreSQL:

    follower = Follower(ledger, [profile_projection, sync_processor])
    result = ledger.propose_change(cmd)
    follower.catch_up()                    # read-your-writes in the same process
    follower.run(stop_event, poll_s=0.5)   # or follow live in a worker thread / process

A processor owns its tracked position and applies a batch atomically with it where it can
(`ProfileProjection`: one view-store transaction). One that writes elsewhere (HTTP) stores
its position after the effects and relies on idempotent writes: at-least-once delivery.
Notification ids have gaps (a rejected insert burns one), so positions are ids, not counts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import DomainEventProtocol

from factledger.application.ledger.cipher import ShreddingMapper

PAGE = 500


@dataclass(frozen=True, slots=True)
class Tracked:
    """One event and its position (notification id) in the application's log."""

    position: int
    event: DomainEventProtocol[UUID]


class Processor(Protocol):
    """Consumes events in log order from its own tracked position.

    - `position()` is the last position whose effects are durable (0: nothing yet).
    - `process(batch)` applies the events in order and then records `batch[-1].position`;
      it must tolerate seeing a batch again after a crash (exactly-once where it shares a
      transaction with its position, idempotent writes where it cannot).
    """

    name: str

    # A processor may say `reads_transcript_text = False` when it never reads the words of a
    # recorded session's messages (only their count, roles or times): a follower whose
    # processors all say so leaves the lines sealed, which spares most of a long transcript's
    # decoding. Without the attribute a processor gets the words.

    def position(self) -> int: ...

    def process(self, batch: Sequence[Tracked]) -> None: ...


def read_events(
    app: Application[UUID], *, after: int, limit: int = PAGE, transcript_text: bool = True
) -> list[Tracked]:
    """Up to `limit` events with a position above `after`, in log order (decoded and upcast);
    with `transcript_text=False` a session's messages may keep their texts sealed
    (`ShreddingMapper.to_domain_events`)."""
    notifications = app.recorder.select_notifications(start=after + 1, limit=limit)
    mapper = app.mapper
    if isinstance(mapper, ShreddingMapper):  # the ledger's: reads a page's keys at once
        events = mapper.to_domain_events(notifications, transcript_text=transcript_text)
        return [Tracked(n.id, e) for n, e in zip(notifications, events, strict=True)]
    return [Tracked(n.id, mapper.to_domain_event(n)) for n in notifications]


def reads_transcript_text(processors: Sequence[Processor]) -> bool:
    """Whether any of `processors` reads the words of a session's messages (see `Processor`)."""
    return any(getattr(p, "reads_transcript_text", True) for p in processors)


def max_position(app: Application[UUID]) -> int:
    """The position of the newest event in the log (0 when empty)."""
    return int(app.recorder.max_notification_id() or 0)


class Follower:
    """Drives processors from the log. Thread-safe: one catch-up runs at a time."""

    def __init__(
        self,
        app: Application[UUID],
        processors: Sequence[Processor],
        *,
        page: int = PAGE,
        read_ahead: bool = False,
    ) -> None:
        self.app = app
        self.processors = list(processors)
        self.page = page
        # Reads and decodes the next page on a thread while a processor applies this one: a
        # PostgreSQL view store's page waits for the server, and the decoding can use that.
        self.read_ahead = read_ahead
        self._transcript_text = reads_transcript_text(self.processors)
        self._lock = threading.Lock()

    def catch_up(self) -> int:
        """Feeds every processor everything up to the head of the log; returns events fed."""
        with self._lock:
            return sum(self._drain(processor) for processor in self.processors)

    def _drain(self, processor: Processor) -> int:
        if self.read_ahead:
            return self._drain_reading_ahead(processor)
        fed = 0
        while batch := self._read(after=processor.position()):
            processor.process(batch)
            fed += len(batch)
            if len(batch) < self.page:
                break
        return fed

    def _drain_reading_ahead(self, processor: Processor) -> int:
        fed = 0
        with ThreadPoolExecutor(1, thread_name_prefix="factledger-read-ahead") as reader:
            batch = self._read(after=processor.position())
            while batch:
                last = batch[-1].position
                upcoming = reader.submit(self._read, after=last)
                processor.process(batch)
                fed += len(batch)
                if len(batch) < self.page:
                    break
                batch = upcoming.result()
                if processor.position() != last:  # it kept another position: read from there
                    batch = self._read(after=processor.position())
        return fed

    def _read(self, *, after: int) -> list[Tracked]:
        return read_events(
            self.app, after=after, limit=self.page, transcript_text=self._transcript_text
        )

    def lag(self) -> dict[str, int]:
        """Events each processor still has to see (for health checks and metrics)."""
        head = max_position(self.app)
        return {p.name: max(0, head - p.position()) for p in self.processors}

    def run(self, stop: threading.Event, *, poll_s: float = 0.5) -> None:
        """Follows the log until `stop` is set; a processor's exception stops the loop (a
        poison event blocks until fixed rather than being skipped)."""
        while not stop.is_set():
            if self.catch_up() == 0:
                stop.wait(poll_s)


def follow(
    app: Application[UUID], processor: Processor, *, stop: threading.Event, poll_s: float = 0.5
) -> None:
    """Runs one processor live until `stop` is set (the worker entry point)."""
    Follower(app, [processor]).run(stop, poll_s=poll_s)
