"""Idempotency keys: a retried command returns the first result.

- Keys are scoped per tenant + principal, so two callers can never see each other's results.
- The first request with a key runs; its JSON result is kept (bounded, with a TTL) with a
  fingerprint of the request (method, route, body). A retry with the same fingerprint gets the
  stored result (header `Idempotent-Replayed: true`); with another fingerprint, a 422; while the
  first is still running, a 409. A failed request frees its key so the retry runs again.
- The key also becomes the command id given to the ledger (`command_id`), so a retry that lands
  on another API process (which lacks this process's cache) is still a no-op in the ledger.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import Header, Request, Response
from pydantic import BaseModel

from factledger.api.errors import (
    IdempotencyKeyReusedError,
    InvalidParameterError,
    RequestInProgressError,
)

IDEMPOTENCY_HEADER = "Idempotency-Key"
_KEY = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class _Entry:
    fingerprint: str
    body: dict[str, object] | None  # None while the first request is still running
    expires_at: float


class InMemoryIdempotencyStore:
    """Results per (tenant, principal, key), LRU-bounded with a TTL; one per API process."""

    def __init__(self, *, ttl_s: float = 24 * 3600, max_entries: int = 10_000) -> None:
        self._ttl_s = ttl_s
        self._max = max_entries
        self._entries: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()

    def begin(self, scope: tuple[str, str, str], fingerprint: str) -> dict[str, object] | None:
        """The stored result of a finished twin, or None after reserving the key for this one."""
        now = time.monotonic()
        entry = self._entries.get(scope)
        if entry is not None and entry.expires_at > now:
            if entry.fingerprint != fingerprint:
                raise IdempotencyKeyReusedError("the key was used for a different request")
            if entry.body is None:
                raise RequestInProgressError("a request with this key is still running")
            self._entries.move_to_end(scope)
            return entry.body
        self._entries[scope] = _Entry(fingerprint, None, now + self._ttl_s)
        self._entries.move_to_end(scope)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return None

    def complete(
        self, scope: tuple[str, str, str], fingerprint: str, body: dict[str, object]
    ) -> None:
        self._entries[scope] = _Entry(fingerprint, body, time.monotonic() + self._ttl_s)

    def abandon(self, scope: tuple[str, str, str]) -> None:
        self._entries.pop(scope, None)


class Idempotency:
    """Per-request helper: runs a command once per key, replays its result afterwards."""

    def __init__(
        self,
        store: InMemoryIdempotencyStore,
        scope: tuple[str, str, str] | None,
        fingerprint: str,
        response: Response,
    ) -> None:
        self._store = store
        self._scope = scope
        self._fingerprint = fingerprint
        self._response = response

    @property
    def command_id(self) -> str | None:
        """A stable command id for the ledger, derived from the scoped key (None without one)."""
        if self._scope is None:
            return None
        return hashlib.sha256("\x1f".join(self._scope).encode()).hexdigest()[:32]

    async def run(self, command: Callable[[], Awaitable[ModelT]], model: type[ModelT]) -> ModelT:
        if self._scope is None:
            return await command()
        stored = self._store.begin(self._scope, self._fingerprint)
        if stored is not None:
            self._response.headers["Idempotent-Replayed"] = "true"
            return model.model_validate(stored)
        try:
            result = await command()
        except BaseException:
            self._store.abandon(self._scope)
            raise
        self._store.complete(self._scope, self._fingerprint, result.model_dump(mode="json"))
        return result


async def fingerprint_of(request: Request) -> str:
    digest = hashlib.sha256()
    route = request.scope.get("route")
    digest.update(f"{request.method} {getattr(route, 'path', request.url.path)}\n".encode())
    digest.update(request.url.path.encode() + b"\n")
    digest.update(await request.body())
    return digest.hexdigest()


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
