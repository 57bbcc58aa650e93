"""The ledger's reads on a hot standby: a subject's events and the notification log.

`standby_recorder` is the `eventsourcing` library's PostgreSQL recorder on the standby (it
never creates a table: the standby replays the primary's); `RoutedReads` reads through it when
the current request may read a standby (`read_routing`), and through the primary's recorder
otherwise. Writes always go to the primary's.

Switching between the two never makes a reader of the log go back or skip: notification ids
are handed out under a table lock, in commit order, and a standby replays commits in order,
so the standby's log is always a prefix of the primary's. A reader's own position is where it
goes on from on either server; a standby that has not replayed as far yet answers nothing new.

A standby that fails a read is left alone for `DOWN_FOR_S`, and the read (and those meanwhile)
goes to the primary: a ledger read never fails for a standby the primary could have served.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

import structlog
from eventsourcing.persistence import (
    ApplicationRecorder,
    Notification,
    StoredEvent,
    Subscription,
)
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import Environment, get_topic

from factledger.adapters.postgres.event_store import HealingPostgresFactory, postgres_env
from factledger.adapters.postgres.replay_position import DOWN_FOR_S
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.read_routing import standby_allowed
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.event_store_errors import reporting_unavailability

log = structlog.get_logger(__name__)
T = TypeVar("T")


def standby_factory(
    location: PostgresLocation,
    *,
    application: str,
    schema: str | None = None,
    pool: PoolOptions = DEFAULT_POOL,
) -> HealingPostgresFactory:
    """The library's factory on the standby, for the tables of `application` in `schema`;
    it connects on first use (a standby that is down does not stop a start)."""
    env = postgres_env(location, pool=pool)  # no schema: creating one would be a write
    if schema is not None:
        env["POSTGRES_SCHEMA"] = schema
    env["CREATE_TABLE"] = "n"
    # The library's plain recorder: ours batches writes, and nothing is written here.
    env["APPLICATION_RECORDER_TOPIC"] = get_topic(PostgresApplicationRecorder)
    return HealingPostgresFactory(Environment(application, env))


def standby_recorder(factory: HealingPostgresFactory) -> ApplicationRecorder:
    """The standby's recorder, raising the application's error when it cannot be read."""
    return reporting_unavailability(factory.application_recorder())


class RoutedReads(ApplicationRecorder):
    """Reads the standby when the current request may, the primary otherwise."""

    def __init__(self, primary: ApplicationRecorder, standby: ApplicationRecorder) -> None:
        self.primary = primary
        self.standby = standby
        self._down_until = 0.0
        self._lock = threading.Lock()

    def standby_resting(self) -> bool:
        """Whether the standby failed a read lately (reads go to the primary meanwhile)."""
        return time.monotonic() < self._down_until

    def _routed(self, read: Callable[[ApplicationRecorder], T]) -> T:
        if standby_allowed() and not self.standby_resting():
            try:
                return read(self.standby)
            except StoreUnavailableError as exc:
                log.warning("replication.standby_ledger_unavailable", error_type=type(exc).__name__)
                with self._lock:
                    self._down_until = time.monotonic() + DOWN_FOR_S
        return read(self.primary)

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        return self._routed(
            lambda r: r.select_events(originator_id, gt=gt, lte=lte, desc=desc, limit=limit)
        )

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        return self._routed(
            lambda r: r.select_notifications(
                start, limit, stop, topics, inclusive_of_start=inclusive_of_start
            )
        )

    def max_notification_id(self) -> int | None:
        return self._routed(lambda r: r.max_notification_id())

    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        return self.primary.insert_events(stored_events, **kwargs)

    def subscribe(
        self, gt: int | None = None, topics: Sequence[str] = ()
    ) -> Subscription[ApplicationRecorder]:
        # A subscription listens for the primary's commits: a standby has none to announce.
        return self.primary.subscribe(gt, topics)
