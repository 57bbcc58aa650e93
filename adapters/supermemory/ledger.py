"""The adapter's own bookkeeping, kept as small verbatim documents inside each namespace.

v5 has no expiry field and no forget reason, so factledger tracks both itself:

- an expiry entry per memory (`fl_kind=expiry`, `fl_memory_id`, `fl_expires_at` as epoch
  seconds, `fl_applied`), replaced with `documents.update` when it changes; once the expiry
  has been applied as a forget it is marked applied and kept, so `expires_at` stays readable;
- a reason entry per forget call (`fl_kind=forget`, `fl_memory_ids`, `fl_reason`).

Both are `superrag` documents (no fact extraction) and the backend drops them from every result.
Keeping them in the namespace means dropping the namespace drops them too, and any process
sharing the namespace sees the same ledger. Expiry entries are cached per namespace for
`cache_s` so recall does not pay a list call each time; this process's own writes update the
cache at once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, cast

from supermemory import AsyncSupermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, add_verbatim, call
from factledger.adapters.supermemory.mapping import KIND, KIND_EXPIRY, KIND_FORGET
from factledger.application.errors import MemoryNotFoundError

MEMORY_ID = "fl_memory_id"
MEMORY_IDS = "fl_memory_ids"
EXPIRES_AT = "fl_expires_at"
REASON = "fl_reason"
APPLIED = "fl_applied"
PAGE = 100


@dataclass(frozen=True, slots=True)
class Expiry:
    at: datetime
    applied: bool = False  # the forget has been sent; the entry stays for `expires_at`


def passed(entries: dict[str, Expiry], now: datetime) -> set[str]:
    """Memories whose expiry time has come, applied or not: hidden from results at once."""
    return {memory_id for memory_id, entry in entries.items() if entry.at <= now}


def pending(entries: dict[str, Expiry], now: datetime) -> set[str]:
    """Memories whose expiry has come but whose forget has not been sent yet."""
    return {m for m, entry in entries.items() if entry.at <= now and not entry.applied}


def _doc_id(prefix: str, *parts: str) -> str:
    # Memory ids come from the vendor; hashing keeps document ids path-safe whatever they hold.
    return prefix + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


class SupermemoryLedger:
    def __init__(self, client: AsyncSupermemory, policy: CallPolicy, *, cache_s: float = 30.0):
        self._client = client
        self._policy = policy
        self._cache_s = cache_s
        self._expiries: dict[str, tuple[float, dict[str, Expiry]]] = {}

    def drop(self, namespace: str) -> None:
        self._expiries.pop(namespace, None)

    async def _list(
        self, namespace: str, expression: dict[str, Any], deadline: Deadline
    ) -> list[Any]:
        items: list[Any] = []
        page = 1
        while True:
            attempt = partial(self._list_page, namespace, expression, page)
            response = await call("list", attempt, self._policy, deadline)
            items += list(response.documents or ())
            pagination = response.pagination
            if pagination is None or page >= int(pagination.total_pages or 1):
                return items
            page += 1

    async def _list_page(
        self, namespace: str, expression: dict[str, Any], page: int, attempt_s: float
    ) -> Any:
        return await self._client.list(
            namespace,
            "documents",
            page=page,
            limit=PAGE,
            order="asc",
            filter=cast("Any", expression),
            include=cast("Any", {"content": False, "memoryCount": False}),
            timeout=attempt_s,
        )

    async def expiries(self, namespace: str, deadline: Deadline) -> dict[str, Expiry]:
        """Memory id -> its expiry entry, from the cache when fresh enough."""
        cached = self._expiries.get(namespace)
        if cached is not None and time.monotonic() - cached[0] < self._cache_s:
            return cached[1]
        expression = {"field": KIND, "operator": "eq", "value": KIND_EXPIRY}
        entries: dict[str, Expiry] = {}
        for doc in await self._list(namespace, expression, deadline):
            metadata = doc.metadata or {}
            memory_id, epoch = metadata.get(MEMORY_ID), metadata.get(EXPIRES_AT)
            if isinstance(memory_id, str) and isinstance(epoch, int | float):
                at = datetime.fromtimestamp(epoch, UTC)
                entries[memory_id] = Expiry(at, applied=metadata.get(APPLIED) is True)
        self._expiries[namespace] = (time.monotonic(), entries)
        return entries

    async def set_expiry(
        self,
        namespace: str,
        memory_id: str,
        at: datetime,
        deadline: Deadline,
        *,
        applied: bool = False,
    ) -> None:
        """Creates or replaces the entry (`documents.update`: a re-`add` would append)."""
        doc_id = _doc_id("fl-exp-", memory_id)
        content = json.dumps({"memory_id": memory_id, "expires_at": at.isoformat()})
        metadata: dict[str, Any] = {
            KIND: KIND_EXPIRY,
            MEMORY_ID: memory_id,
            EXPIRES_AT: at.timestamp(),
            APPLIED: applied,
        }
        try:
            await call(
                "documents.update",
                lambda t: self._client.documents.update(
                    namespace, doc_id, content=content, metadata=metadata, timeout=t
                ),
                self._policy,
                deadline,
            )
        except MemoryNotFoundError:
            await add_verbatim(
                self._client, namespace, doc_id, content, metadata, self._policy, deadline
            )
        entries = await self.expiries(namespace, deadline)
        entries[memory_id] = Expiry(at, applied=applied)

    async def record_reason(
        self, namespace: str, memory_ids: Sequence[str], reason: str, deadline: Deadline
    ) -> None:
        doc_id = _doc_id("fl-fgt-", reason, *sorted(memory_ids))
        metadata: dict[str, Any] = {KIND: KIND_FORGET, MEMORY_IDS: list(memory_ids), REASON: reason}
        content = f"forget {len(memory_ids)} memories"
        await add_verbatim(
            self._client, namespace, doc_id, content, metadata, self._policy, deadline
        )

    async def reasons(
        self, namespace: str, deadline: Deadline, memory_id: str | None = None
    ) -> dict[str, str]:
        """Memory id -> the reason it was first forgotten for (one id, or the whole namespace)."""
        expression: dict[str, Any] = {"field": KIND, "operator": "eq", "value": KIND_FORGET}
        if memory_id is not None:
            member = {"field": MEMORY_IDS, "operator": "arrayContains", "value": memory_id}
            expression = {"operator": "and", "operands": [expression, member]}
        found: dict[str, str] = {}
        for doc in await self._list(namespace, expression, deadline):
            metadata = doc.metadata or {}
            reason = metadata.get(REASON)
            for forgotten in metadata.get(MEMORY_IDS) or ():
                if isinstance(reason, str):
                    found.setdefault(forgotten, reason)
        return found
