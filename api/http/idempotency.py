"""Idempotency keys: a retried command returns the first result, on whichever API process.

- Keys are scoped per tenant, principal and the subject the command acts on, so two callers
  never see each other's results, nor one caller's commands on two subjects (agent tokens of
  one `sub` bound to different subjects share nothing).
- The first request with a key claims it in the shared `IdempotencyStore` (in memory, SQLite
  beside the embedded event store, or PostgreSQL beside a PostgreSQL event store) before it
  runs; its JSON result is then saved with a fingerprint of the request (method, route, body):
  an HMAC under the deployment's fingerprint key, bound to the scope, so the store gives no
  guessable digest of a short body (`application.ledger.request_fingerprints`).
  A retry with the same fingerprint gets the saved result (header `Idempotent-Replayed: true`);
  with another fingerprint, a 422 naming the header; while the first is still running (on any
  process), a 409 "retry later". A failed request frees its key so the retry runs again.
- The claim is a short lease, renewed in the background every third of it while the command
  runs: a long command keeps its key, and a process that dies frees it within one lease.
- The key also becomes the command id given to the ledger (`command_id`), so even a retry that
  outlives the saved result (TTL) is a no-op in the ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar
from uuid import UUID

import structlog
from fastapi import Header, Request, Response
from pydantic import BaseModel

from factledger.api.http.errors import (
    IdempotencyKeyReusedError,
    InvalidParameterError,
    RequestInProgressError,
)
from factledger.api.http.timing import IDEMPOTENCY, USE_CASE, timed
from factledger.application.errors import StoreUnavailableError
from factledger.application.ledger.commands import CommandResult
from factledger.application.ledger.idempotency import (
    DEFAULT_TTL_S,
    ClaimStatus,
    IdempotencyScope,
    JsonBody,
    for_ledger_commands,
)
from factledger.application.ledger.ports import IdempotencyStore
from factledger.application.ledger.request_fingerprints import (
    RequestFingerprints,
    keyed_fingerprint,
    request_digest,
)
from factledger.application.ledger.responses import PendingResponse, responding
from factledger.domain.subject import Subject

IDEMPOTENCY_HEADER = "Idempotency-Key"
_KEY = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")
ModelT = TypeVar("ModelT", bound=BaseModel)
log = structlog.get_logger(__name__)


class Idempotency:
    """Per-request helper: runs a command once per key, replays its result afterwards."""

    def __init__(
        self,
        store: IdempotencyStore,
        scope: IdempotencyScope | None,
        fingerprint: str,
        response: Response,
        *,
        renew_every_s: float | None = None,
    ) -> None:
        self._store = store
        self._scope = scope
        self._fingerprint = fingerprint
        self._response = response
        self._renew_every_s = renew_every_s or store.lease_s / 3

    @property
    def command_id(self) -> str | None:
        """A stable command id for the ledger, derived from the scoped key (None without one)."""
        if self._scope is None:
            return None
        scope = self._scope
        parts = (scope.tenant, scope.principal, str(scope.subject_id), scope.key)
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]

    async def run(
        self,
        command: Callable[[], Awaitable[ModelT]],
        model: type[ModelT],
        *,
        render: Callable[[Subject, CommandResult], ModelT] | None = None,
    ) -> ModelT:
        """Runs `command` once per key. `render` (for a command that saves ledger events)
        builds the response from the subject as saved and the command's result: where the
        store allows it, the response is saved in the transaction of the events,
        so a crash between the two can neither lose it nor let a retry run the command."""
        if self._scope is None:
            with timed(USE_CASE):
                return await command()
        if render is not None:
            self._store = for_ledger_commands(self._store)
        with timed(IDEMPOTENCY):
            claim = await self._store.claim(self._scope, self._fingerprint)
        match claim.status:
            case ClaimStatus.REPLAY:
                self._response.headers["Idempotent-Replayed"] = "true"
                return model.model_validate(claim.body)
            case ClaimStatus.MISMATCH:
                raise IdempotencyKeyReusedError("the key was used for a different request")
            case ClaimStatus.IN_PROGRESS:
                raise RequestInProgressError(
                    "a request with this key is still running; retry later"
                )
        renewal = asyncio.create_task(self._keep_lease())
        pending = self._pending(render)
        try:
            responds = contextlib.nullcontext() if pending is None else responding(pending)
            with timed(USE_CASE), responds:
                result = await command()
        except BaseException:
            await _stop(renewal)
            await self._release()
            raise
        await _stop(renewal)
        if pending is not None and pending.written and pending.body is not None:
            if getattr(self._store, "claims_apart_from_events", False):
                await self._settle_claim(pending.body)
            # Answer exactly what a retry will be answered.
            return model.model_validate(pending.body)
        body = result.model_dump(mode="json")
        with timed(IDEMPOTENCY):
            await self._store.complete(self._scope, self._fingerprint, body)
        return result

    def _pending(
        self, render: Callable[[Subject, CommandResult], ModelT] | None
    ) -> PendingResponse | None:
        if render is None or self._scope is None:
            return None
        if not getattr(self._store, "commits_with_events", False):
            return None
        ttl_s = float(getattr(self._store, "ttl_s", DEFAULT_TTL_S))

        def body(subject: Subject, result: CommandResult) -> JsonBody:
            return render(subject, result).model_dump(mode="json")

        return PendingResponse(self._scope, self._fingerprint, time.time() + ttl_s, body)

    async def _settle_claim(self, body: JsonBody) -> None:
        """The claim lives apart from the response saved with the events (SQLite):
        it gets the body too, so the key stays refused to another request after its lease
        and a process of an earlier build replays it. Best effort: the response is saved."""
        assert self._scope is not None  # noqa: S101 - only called for a claimed key
        try:
            with timed(IDEMPOTENCY):
                await self._store.complete(self._scope, self._fingerprint, body)
        except StoreUnavailableError:
            log.warning("api.idempotency_claim_not_settled")

    async def _keep_lease(self) -> None:
        assert self._scope is not None  # noqa: S101 - only run for a claimed key
        while True:
            await asyncio.sleep(self._renew_every_s)
            try:
                held = await self._store.renew(self._scope, self._fingerprint)
            except StoreUnavailableError:
                # The next renewal may get through; if none does, the lease lapses and a
                # retry may run the command again, which the ledger drops by command id.
                log.warning("api.idempotency_renewal_failed")
                continue
            if not held:
                log.warning("api.idempotency_lease_lost")
                return

    async def _release(self) -> None:
        assert self._scope is not None  # noqa: S101 - only called for a claimed key
        try:
            await self._store.release(self._scope, self._fingerprint)
        except StoreUnavailableError:
            # The command's own error matters more; the claim's lease frees the key later.
            log.warning("api.idempotency_release_failed")


class IdempotencyRequest:
    """A request's key before it is scoped: `for_subject` names the subject it acts on, and
    the fingerprint is keyed then, bound to the whole scope."""

    def __init__(
        self,
        store: IdempotencyStore,
        *,
        tenant: str,
        principal: str,
        key: str | None,
        digest: bytes,
        fingerprint_key: bytes | None,
        response: Response,
    ) -> None:
        self._store, self._tenant, self._principal = store, tenant, principal
        self._key, self._digest, self._response = key, digest, response
        self._fingerprint_key = fingerprint_key

    def for_subject(self, subject_id: UUID) -> Idempotency:
        if self._key is None or self._fingerprint_key is None:
            return Idempotency(self._store, None, "", self._response)
        scope = IdempotencyScope(self._tenant, self._principal, subject_id, self._key)
        fingerprint = keyed_fingerprint(self._fingerprint_key, scope, self._digest)
        return Idempotency(self._store, scope, fingerprint, self._response)


async def _stop(renewal: asyncio.Task[None]) -> None:
    # `wait` rather than `await renewal`: a cancellation of the request itself must propagate.
    renewal.cancel()
    await asyncio.wait([renewal])
    if not renewal.cancelled() and (error := renewal.exception()) is not None:
        log.warning("api.idempotency_renewal_failed", error_type=type(error).__name__)


async def digest_of(request: Request) -> bytes:
    """The request (method, route, path, body) for comparing it with its retry; the store
    keeps only an HMAC of it (`keyed_fingerprint`)."""
    route = request.scope.get("route")
    route_path = getattr(route, "path", request.url.path)
    return request_digest(request.method, route_path, request.url.path, await request.body())


async def fingerprint_key_of(keys: RequestFingerprints) -> bytes:
    """The deployment's fingerprint key, read off the event loop the first time."""
    known = keys.known_key()
    return known if known is not None else await asyncio.to_thread(keys.key)


def parse_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not _KEY.fullmatch(raw):
        raise InvalidParameterError(IDEMPOTENCY_HEADER, "8..128 characters of [A-Za-z0-9._:-]")
    return raw


IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias=IDEMPOTENCY_HEADER,
        description="Optional key; a retry with the same key returns the first result.",
    ),
]
