"""Delivers each endpoint's events in log order, one at a time, signed; retries with backoff.

- An endpoint receives its tenant's events (narrowed by kinds and types) after its position in
  the delivery log. An event is delivered when the endpoint answers 2xx; until then no later
  event goes to that endpoint, so order holds. A failure is tried again after
  `backoff_s * 2**(attempt - 1)` (at most `max_backoff_s`); after `max_attempts` the event is
  given up (logged as such) and the next one goes.
- Delivery is at least once: a process that stops between a 2xx and its log write sends that
  event again. Each body carries its delivery id (`<endpoint>:<position>`), for receivers to
  drop a repeat; it is also the Standard Webhooks `webhook-id` the signature covers
  (`signing`).
- Content goes only to endpoints configured for it; forgotten values never (the stream's rules).
- Every attempt is in the log (outcome, status, error type); the logs carry ids, never content.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

import structlog

from factledger.application.clocks import Clock
from factledger.application.ledger.event_log import LoggedEvent, LogPage, TenantEventLog
from factledger.application.ledger.event_views import event_body
from factledger.application.retry_schedule import RetrySchedule
from factledger.application.webhooks.ports import (
    Delivery,
    DeliveryLog,
    Outcome,
    WebhookSender,
    WebhookUnreachableError,
)
from factledger.application.webhooks.signing import signed_headers

log = structlog.get_logger(__name__)
EVENT_HEADER = "Factledger-Event"
_EVENTS = {outcome: f"webhook.{outcome.value}" for outcome in Outcome}


@dataclass(frozen=True, slots=True)
class Endpoint:
    id: str
    tenant: str
    url: str
    secret: bytes
    kinds: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    content: bool = False
    max_attempts: int = 8
    backoff_s: float = 1.0
    max_backoff_s: float = 300.0
    timeout_s: float = 10.0

    def retry_schedule(self) -> RetrySchedule:
        return RetrySchedule(self.max_attempts, self.backoff_s, self.max_backoff_s)


@dataclass(frozen=True, slots=True)
class _Waiting:
    """An event that failed: its attempts so far and when it may be tried again."""

    position: int
    attempts: int
    not_before: datetime


class WebhookDispatcher:
    """Serves every configured endpoint; `run_once` is one pass, `run` passes until stopped."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        events: TenantEventLog,
        log: DeliveryLog,
        sender: WebhookSender,
        clock: Clock,
        batch: int = 100,
    ) -> None:
        self._endpoints = tuple(endpoints)
        self._events, self._log, self._sender, self._clock = events, log, sender, clock
        self._batch = batch
        self._waiting: dict[str, _Waiting] = {}
        self._scanned: dict[str, int] = {}  # past the log's position: nothing there to send

    async def run_once(self) -> int:
        """One pass over the endpoints; the number of attempts made."""
        attempts = 0
        for endpoint in self._endpoints:
            attempts += await self._serve(endpoint)
        return attempts

    async def run(self, *, poll_s: float, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if await self.run_once() == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=poll_s)

    async def _serve(self, endpoint: Endpoint) -> int:
        waiting = self._waiting.get(endpoint.id)
        if waiting is not None and waiting.not_before > self._clock.now():
            return 0
        logged = await self._log.position(endpoint.id)
        after = max(logged, self._scanned.get(endpoint.id, 0))
        page, forgotten = await asyncio.to_thread(self._read, endpoint, after)
        attempts = 0
        for event in page.events:
            attempts += 1
            if not await self._deliver(endpoint, event, forgotten.get(event.subject_id, set())):
                return attempts
        self._scanned[endpoint.id] = page.scanned_to
        return attempts

    def _read(self, endpoint: Endpoint, after: int) -> tuple[LogPage, dict[UUID, set[str]]]:
        page = self._events.read(
            endpoint.tenant,
            after=after,
            limit=self._batch,
            types=endpoint.types,
            kinds=endpoint.kinds,
        )
        proposals = [e.subject_id for e in page.events if e.type == "change_proposed"]
        return page, self._events.forgotten_fields(proposals)

    async def _deliver(self, endpoint: Endpoint, event: LoggedEvent, forgotten: set[str]) -> bool:
        """One attempt; True when the endpoint may go on to its next event."""
        delivery_id = f"{endpoint.id}:{event.position}"
        body = json.dumps(
            {
                "id": delivery_id,
                "endpoint": endpoint.id,
                "event": event_body(event, forgotten, content=endpoint.content),
            },
            separators=(",", ":"),
        ).encode()
        now = self._clock.now()
        headers = {
            "Content-Type": "application/json",
            **signed_headers(endpoint.secret, delivery_id, now, body),
            EVENT_HEADER: event.type,
        }
        waiting = self._waiting.pop(endpoint.id, None)
        attempt = 1 + (waiting.attempts if waiting and waiting.position == event.position else 0)
        status, error = await self._post(endpoint, body, headers)
        retry_in = endpoint.retry_schedule().wait_after(attempt)
        outcome = self._outcome(status, retry_in)
        if outcome is Outcome.FAILED and retry_in is not None:
            self._waiting[endpoint.id] = _Waiting(
                event.position, attempt, now + timedelta(seconds=retry_in)
            )
        delivery = Delivery(endpoint.id, event.position, attempt, outcome, status, error, now)
        advance = None if outcome is Outcome.FAILED else event.position
        await self._log.record(delivery, advance_to=advance)
        report = log.info if outcome is Outcome.DELIVERED else log.warning
        report(
            _EVENTS[outcome],
            endpoint=endpoint.id,
            position=event.position,
            attempt=attempt,
            status=status,
            error_type=error,
        )
        return outcome is not Outcome.FAILED

    async def _post(
        self, endpoint: Endpoint, body: bytes, headers: dict[str, str]
    ) -> tuple[int | None, str | None]:
        try:
            status = await self._sender.post(
                endpoint.url, body, headers, timeout_s=endpoint.timeout_s
            )
        except WebhookUnreachableError as exc:
            return None, type(exc.__cause__ or exc).__name__
        return status, None if 200 <= status < 300 else f"http_{status}"

    @staticmethod
    def _outcome(status: int | None, retry_in: float | None) -> Outcome:
        if status is not None and 200 <= status < 300:
            return Outcome.DELIVERED
        return Outcome.GAVE_UP if retry_in is None else Outcome.FAILED
