"""The saved response of a command, written in the transaction that saves its events.

The HTTP layer's idempotency key is claimed before a command runs and its response saved
after it. Between the two, a crash left the events committed and the response unsaved: a
retry then ran the command again (a no-op by command id) and answered from the ledger's
state by then. Where the event store can (PostgreSQL: the saved responses are a table beside
the events), the response is written with the events instead, in one transaction:

- the request sets a `PendingResponse` for its command (`responding`), with `render`, which
  builds the response body from the subject as saved and the command's result;
- `LedgerCore._run` renders it once the events have their positions and passes it to the
  save (`response=`); a recorder that knows the table writes it in the events' transaction,
  then the ledger marks it `written`, and the request does not save it again. A recorder
  that does not (in memory, SQLite), or a command that saves nothing, leaves it unwritten
  and the request saves the response afterwards as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from factledger.application.ledger.commands import CommandResult
from factledger.application.ledger.idempotency import IdempotencyScope, JsonBody
from factledger.domain.subject import Subject

Render = Callable[[Subject, CommandResult], JsonBody]


@dataclass(slots=True)
class PendingResponse:
    """One request's response, waiting for the save of its command's events."""

    scope: IdempotencyScope
    fingerprint: str
    expires_at: float  # seconds since the epoch, as the idempotency store keeps them
    render: Render
    written: bool = False
    body: JsonBody | None = None  # as written: what the request answers too


@dataclass(slots=True)
class ResponseWrite:
    """What a save hands its recorder: `body(positions)` gives the body once the events'
    notification ids are known; the recorder sets `executed` when it wrote it."""

    pending: PendingResponse
    body: Callable[[Sequence[int]], JsonBody]
    executed: bool = False


_pending: ContextVar[PendingResponse | None] = ContextVar("pending_response", default=None)


def pending_response() -> PendingResponse | None:
    """The response the running request wants written with its events, if any."""
    return _pending.get()


@contextmanager
def responding(pending: PendingResponse) -> Iterator[PendingResponse]:
    """Within the block (and the threads it starts with `asyncio.to_thread`, which copy the
    context), ledger saves of `pending.scope`'s subject carry `pending`."""
    token = _pending.set(pending)
    try:
        yield pending
    finally:
        _pending.reset(token)
