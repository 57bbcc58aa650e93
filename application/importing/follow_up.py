"""After an import: wait for the sync to ship it (and propose from it), then count the proposals.

The proposals step runs on the sync queue, one `propose` item per recorded session, in the
order the sessions were recorded per subject (`SyncStore.claim`). A process that wants the
final report to say what the model proposed runs a worker until the queue is empty, then
counts the changes the model's reviews of the imported sessions proposed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import cast
from uuid import UUID

from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.types import SyncReport
from factledger.application.sync.worker import SyncWorker
from factledger.domain.events import SessionReviewed

_PAGE = 500


async def drain_sync(
    worker: SyncWorker, store: SyncStore, *, timeout_s: float, poll_s: float = 0.2
) -> bool:
    """Runs `worker` until no item is pending (True) or `timeout_s` passed (False). Dead
    letters do not count as pending: they wait for an operator."""
    deadline = time.monotonic() + timeout_s
    while True:
        report = await worker.run_once()
        if await store.pending_count() == 0:
            return True
        if time.monotonic() >= deadline:
            return False
        if report == SyncReport():  # items wait for a backoff or another worker's lease
            await asyncio.sleep(poll_s)


def ledger_head(ledger: Ledger) -> int:
    """The notification id of the ledger's last event (0 when empty); blocking."""
    return int(ledger.recorder.max_notification_id() or 0)


def count_proposals(ledger: Ledger, *, after: int, sessions: Iterable[tuple[UUID, str]]) -> int:
    """The changes proposed by the model's reviews of `sessions` recorded after position
    `after`; blocking (run it in a thread)."""
    wanted = set(sessions)
    total, start = 0, after
    while wanted:
        notifications = ledger.recorder.select_notifications(
            start=start, limit=_PAGE, topics=[SessionReviewed.TOPIC], inclusive_of_start=False
        )
        if not notifications:
            break
        for notification in notifications:
            event = cast("SessionReviewed", ledger.mapper.to_domain_event(notification))
            if (event.originator_id, event.session_id) in wanted:
                total += len(event.change_ids)
        start = notifications[-1].id
    return total
