"""What webhook delivery needs: a way to POST, and a log of positions and attempts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from factledger.application.errors import StoreUnavailableError


class WebhookUnreachableError(Exception):
    """The endpoint could not be reached (connection, timeout); the cause is kept, never its
    message, which can name hosts."""


class WebhookAddressRefusedError(WebhookUnreachableError):
    """The endpoint's host is (or resolves to) an internal address, and the operator did not
    allow those."""


class DeliveryLogUnavailableError(StoreUnavailableError):
    """The delivery log's store failed."""


class Outcome(StrEnum):
    DELIVERED = "delivered"  # a 2xx answer
    FAILED = "failed"  # another status, or unreachable: tried again later
    GAVE_UP = "gave_up"  # the last allowed attempt failed: the event is skipped


@dataclass(frozen=True, slots=True)
class Delivery:
    """One attempt to deliver one event to one endpoint."""

    endpoint: str
    position: int
    attempt: int  # 1, 2, ... for this event
    outcome: Outcome
    status: int | None  # the HTTP status; None when unreachable
    error: str | None  # the error's type, never its message
    at: datetime


class WebhookSender(Protocol):
    """POSTs a body; answers the HTTP status, or raises `WebhookUnreachableError`."""

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int: ...


class DeliveryLog(Protocol):
    """Each endpoint's position (the last event delivered or given up) and every attempt.

    `record` saves an attempt and, when given `advance_to`, the new position, in one write; a
    position never moves back.
    """

    async def position(self, endpoint: str) -> int: ...

    async def record(self, delivery: Delivery, *, advance_to: int | None) -> None: ...

    async def deliveries(self, endpoint: str, *, limit: int) -> Sequence[Delivery]:
        """The latest attempts, newest first."""
        ...
