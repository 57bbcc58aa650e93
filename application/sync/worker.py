"""The sync worker: follows the ledger from a durable position and writes to the backend.

- Feeding: new events become work items, and the tracked position moves, in one transaction
  of the `SyncStore`, so a crash never skips an event nor plans one twice.
- Processing: items are claimed (leased), applied with idempotent writes, then completed; a
  crash between the write and the completion only repeats an idempotent write.
- Each item gets `MAX_ATTEMPTS` attempts with exponential backoff, then goes to the dead
  letters (error type and ids only) while the worker moves on; an input the memory port
  refuses (`InvalidMemoryInputError`) goes there at once, since no retry can succeed. An item
  that failed because something it needs is away (a store or the backend unreachable, or too
  slow: `StoreUnavailableError`, `MemoryTimeoutError`) gets `OUTAGE_ATTEMPTS`, the wait
  doubling up to `max_outage_wait_s` (about an hour in all), so an outage heals with no
  operator (ADR 0183).
- Several workers may run against one store: claims and per-subject order are the store's job.
- Items of tenants whose memory is off (`MemorySwitch`) are completed without a write and
  counted as skipped.
- With a `proposer`, every recorded session also gets a `propose` item: the model's review
  of the session, recorded in the ledger (`application.proposals`), after the ingest.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass

import structlog

from factledger.application.errors import (
    InvalidMemoryInputError,
    MemoryTimeoutError,
    StoreUnavailableError,
)
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.memory.ports import MemoryBackend
from factledger.application.retry_schedule import RetrySchedule
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.apply import (
    SyncWriteFailedError,
    UnexpectedEventError,
    apply_item,
)
from factledger.application.sync.plan import plan
from factledger.application.sync.ports import (
    EventFeed,
    LedgerEvent,
    ProfileVersions,
    SyncStore,
)
from factledger.application.sync.switch import MemorySwitch
from factledger.application.sync.types import MAX_ATTEMPTS, SyncItem, SyncKind, SyncReport
from factledger.application.sync.wakeup import Wakeup
from factledger.domain.events import SessionRecorded

log = structlog.get_logger(__name__)
# The tries of an item an outage fails: about an hour at the default waits (doubling from
# `backoff_s` to `max_outage_wait_s`), so an outage of that length costs no dead letter while
# an item that fails so on its own (a transcript too long to ingest in time) still ends as one
# and stops holding its subject's later items.
OUTAGE_ATTEMPTS = 64
# The error type recorded on an item whose pass a store failure cut short.
INTERRUPTED = "SyncPassInterrupted"


@dataclass(frozen=True, slots=True)
class SyncOptions:
    batch_size: int = 50
    lease_s: float = 60.0
    backoff_s: float = 0.5  # first retry after backoff_s, then doubled
    poll_interval_s: float = 0.5
    concurrency: int = 1  # items of different subjects applied side by side
    # The longest wait between tries of an item whose store or backend is away (ADR 0183).
    max_outage_wait_s: float = 60.0


@dataclass(frozen=True, slots=True)
class SyncPorts:
    store: SyncStore
    feed: EventFeed
    profiles: ProfileVersions
    backend: MemoryBackend
    switch: MemorySwitch | None = None  # None: memory on for every tenant
    proposer: SessionProposer | None = None  # None: no `propose` items are planned
    # Keeps requests to forget out of what the backend ingests; None: transcripts go as said.
    judge: SentenceJudge | None = None


class SyncWorker:
    """One worker; run several (in one process or many) for throughput."""

    def __init__(
        self,
        ports: SyncPorts,
        options: SyncOptions | None = None,
        *,
        worker_id: str | None = None,
        wakeup: Wakeup | None = None,
    ) -> None:
        self._ports = ports
        self._wakeup = wakeup  # None: only the poll interval wakes an idle worker
        self._options = options or SyncOptions()
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:8]}"
        # Items of a pass cut short by a store failure, still leased to this worker.
        self._interrupted: list[SyncItem] = []

    async def feed(self) -> int:
        """Turns new events into items; returns how many items were added."""
        store, added = self._ports.store, 0
        propose = self._ports.proposer is not None
        limit = self._options.batch_size
        while True:
            after = await store.position()
            # The head is read before the events: everything up to it is either among them
            # or an event the sync never reads, so a short batch moves the position to it.
            head = await self._ports.feed.head()
            if head <= after:
                return added
            events = await self._ports.feed.read(after=after, limit=limit, upto=head)
            tenants = await self._ports.feed.tenants_of(e.originator_id for _, e in events)
            items = [
                item
                for position, event in events
                for item in plan(position, event, tenants[event.originator_id], propose=propose)
            ]
            upto = events[-1][0] if len(events) == limit else head
            if await store.enqueue(items, after=after, upto=upto):
                added += len(items)
            # else another worker fed this batch first: read on from the new position

    async def process(self) -> SyncReport:
        """Claims and applies items until none is claimable."""
        counts: Counter[str] = Counter()
        if self._options.concurrency > 1:
            counts.update(await self._process_rolling())
        else:
            while items := await self._claim(self._options.batch_size):
                counts.update(await self._process_in_order(items))
        return SyncReport(
            done=counts["done"],
            retried=counts["retried"],
            dead=counts["dead"],
            skipped=counts["skipped"],
        )

    async def _claim(self, limit: int) -> list[SyncItem]:
        return await self._ports.store.claim(
            self.worker_id, limit=limit, lease_s=self._options.lease_s
        )

    async def _process_in_order(self, items: list[SyncItem]) -> list[str]:
        """Applies a claim's items one after the other, then completes the done ones in one
        call (a round trip per claim, not per item). Items whose pass a store failure cut
        short are kept to give back, and the failure raised."""
        outcomes: list[str] = []
        for index, item in enumerate(items):
            try:
                outcomes.append(await self._process_one(item))
            except Exception:
                self._interrupted.extend(items[index:])
                self._interrupted.extend(self._done(items[:index], outcomes))
                raise
        await self._complete(self._done(items, outcomes))
        return outcomes

    async def _process_rolling(self) -> list[str]:
        """Keeps up to `concurrency` items applying side by side and claims more whenever
        half of them have finished (ADR 0103): no claim waits for its slowest item, and a
        claim takes at most `2 * concurrency` items, not `batch_size`, so several worker
        processes share the claimable items (a claim holds at most one item per subject, and
        a subject's next item waits until its previous one is completed). The items done are
        completed together right before each claim (one round trip for several). A store
        failure waits for the items still applying, keeps every item not completed to give
        back, and is raised."""
        width = self._options.concurrency
        running: dict[asyncio.Task[str], SyncItem] = {}
        waiting: deque[SyncItem] = deque()
        done: list[SyncItem] = []  # applied, their completion not sent yet
        outcomes: list[str] = []
        # After an empty claim while items were applying, the next claim waits until none
        # is (their completion may make their subjects' next items claimable).
        starved = False
        try:
            while True:
                if not waiting and (not running if starved else len(running) <= width // 2):
                    if done:
                        sent, done = done, []
                        await self._complete(sent)
                    claimed = await self._claim(min(self._options.batch_size, 2 * width))
                    if not claimed and not running:
                        return outcomes
                    starved = not claimed
                    waiting.extend(claimed)
                while waiting and len(running) < width:
                    item = waiting.popleft()
                    running[asyncio.ensure_future(self._process_one(item))] = item
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    outcome = task.result()  # a failure leaves its item in `running`
                    item = running.pop(task)
                    outcomes.append(outcome)
                    if outcome == "done":
                        done.append(item)
        except Exception:
            # `_complete` keeps what it could not complete; the rest is kept here.
            results = await asyncio.gather(*running, return_exceptions=True)
            self._interrupted.extend(waiting)
            self._interrupted.extend(done)
            self._interrupted.extend(
                item
                for item, result in zip(running.values(), results, strict=True)
                if result == "done" or not isinstance(result, str)
            )
            raise
        except BaseException:  # cancelled: no item of this pass goes on applying
            for task in running:
                task.cancel()
            raise

    @staticmethod
    def _done(items: list[SyncItem], outcomes: list[str]) -> list[SyncItem]:
        """The items applied whose completion is still to be sent (`_process_one`)."""
        return [item for item, outcome in zip(items, outcomes, strict=False) if outcome == "done"]

    async def _complete(self, done: list[SyncItem]) -> None:
        try:
            await self._ports.store.complete_many([item.item_id for item in done])
        except Exception:
            # Still leased: given back (a failed attempt each) and applied again, idempotently.
            self._interrupted.extend(done)
            raise

    async def give_back_interrupted(self) -> None:
        """Gives back the items of a pass that a store failure cut short (the database went
        away mid-batch): they are still leased to this worker, and waiting out the lease
        would stall their subjects for `lease_s` after the database is back. Each counts as
        a failed attempt."""
        while self._interrupted:
            item = self._interrupted[-1]
            await self._ports.store.fail(item.item_id, error_type=INTERRUPTED, retry_in_s=0.0)
            self._interrupted.pop()

    async def run_once(self) -> SyncReport:
        """Gives back a cut-short pass's items, feeds, then processes everything claimable."""
        await self.give_back_interrupted()
        fed = await self.feed()
        report = await self.process()
        return SyncReport(
            fed=fed,
            done=report.done,
            retried=report.retried,
            dead=report.dead,
            skipped=report.skipped,
        )

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Runs passes until `stop` is set, sleeping between passes that found nothing.

        A pass that fails (the queue's or the ledger's database is unreachable) is logged and
        retried after the poll interval: items stay in the queue, nothing is lost.
        """
        log.info("sync.worker_started", worker_id=self.worker_id)
        while not stop.is_set():
            try:
                report = await self.run_once()
            except Exception as exc:  # keep following; the queue is durable
                log.warning(
                    "sync.pass_failed", worker_id=self.worker_id, error_type=type(exc).__name__
                )
                report = SyncReport()
            if report == SyncReport():
                await self._idle(stop)
        log.info("sync.worker_stopped", worker_id=self.worker_id)

    async def _idle(self, stop: asyncio.Event) -> None:
        """Until the poll interval passes, `stop` is set or (with a wakeup) a commit lands."""
        timeout = self._options.poll_interval_s
        if self._wakeup is not None:
            await self._wakeup.wait(stop, within_s=timeout)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=timeout)

    async def _propose(self, item: SyncItem, event: LedgerEvent) -> None:
        proposer = self._ports.proposer
        if proposer is None:  # planned by a worker that had one; this one leaves it done
            return
        if not isinstance(event, SessionRecorded):
            raise UnexpectedEventError(f"sync item {item.item_id}: {type(event).__name__}")
        await proposer.review(item.tenant, event)

    def _retry_in(self, exc: Exception, attempts: int) -> float | None:
        """Seconds until a failed item's next try; None: it becomes a dead letter now."""
        if isinstance(exc, InvalidMemoryInputError):
            return None  # the backend refused the input itself: every retry would be alike
        if isinstance(exc, StoreUnavailableError | MemoryTimeoutError):
            # An outage: the item waits for what it needs rather than become a dead letter
            # that only an operator brings back; never less than a poll interval, or a pass
            # would spin on it while the outage lasts.
            cap = self._options.max_outage_wait_s
            outage = RetrySchedule(OUTAGE_ATTEMPTS, self._options.backoff_s, max_backoff_s=cap)
            wait = outage.wait_after(attempts)
            return None if wait is None else max(wait, self._options.poll_interval_s)
        return RetrySchedule(MAX_ATTEMPTS, self._options.backoff_s).wait_after(attempts)

    async def _process_one(self, item: SyncItem) -> str:
        started = time.perf_counter()
        store = self._ports.store
        try:
            switch = self._ports.switch
            if switch is not None and not await switch.allows(item.subject_id, item.kind):
                await store.complete(item.item_id)
                log.info(
                    "sync.item_skipped",
                    item_id=item.item_id,
                    kind=item.kind.value,
                    subject_id=str(item.subject_id),
                    reason="memory_off",
                )
                return "skipped"
            event = await self._ports.feed.get(item.position)
            if item.kind is SyncKind.PROPOSE:
                await self._propose(item, event)
            else:
                await apply_item(
                    item, event, self._ports.backend, self._ports.profiles, self._ports.judge
                )
        except Exception as exc:  # any failure is retried, then dead-lettered; never fatal
            error_type = (
                exc.error_type if isinstance(exc, SyncWriteFailedError) else type(exc).__name__
            )
            attempts = item.attempts + 1
            retry_in = self._retry_in(exc, attempts)
            final = retry_in is None
            await store.fail(item.item_id, error_type=error_type, retry_in_s=retry_in)
            log.warning(
                "sync.item_dead_lettered" if final else "sync.item_failed",
                item_id=item.item_id,
                kind=item.kind.value,
                subject_id=str(item.subject_id),
                attempts=attempts,
                error_type=error_type,
            )
            return "dead" if final else "retried"
        # Completed with others of its claim (`_process_in_order`, `_process_rolling`).
        log.info(
            "sync.item_done",
            item_id=item.item_id,
            kind=item.kind.value,
            subject_id=str(item.subject_id),
            duration_ms=round((time.perf_counter() - started) * 1e3, 2),
        )
        return "done"
