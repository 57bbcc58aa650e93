"""Memories on Supermemory v5: listing with relations, details, and per-id forgetting.

v5 lists carry no relations, so a listed window is completed with one `memories.get
(include=["related"])` per memory, `RELATION_FETCHES` at a time; `forget` goes out in batches
of 500 ids, the API's limit, and unknown ids come back as `missing`.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any, cast

from supermemory import AsyncSupermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, call
from factledger.adapters.supermemory.mapping import relations_of, version_of
from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.types import Relation

RELATION_FETCHES = 8
FORGET_BATCH = 500
PAGE = 100


class SupermemoryMemories:
    def __init__(self, client: AsyncSupermemory, policy: CallPolicy) -> None:
        self._client = client
        self._policy = policy

    async def listed(
        self,
        ns: str,
        *,
        include_superseded: bool,
        include_forgotten: bool,
        limit: int,
        offset: int,
        deadline: Deadline,
    ) -> list[tuple[Any, tuple[Relation, ...]]]:
        """The window `offset:offset+limit` of the chosen memories, oldest first, with relations."""
        chosen: list[Any] = []
        page = 1
        while len(chosen) < offset + limit:
            attempt = partial(self._page, ns, page, include_forgotten)
            response = await call("list", attempt, self._policy, deadline)
            chosen.extend(
                memory
                for memory in response.memories or ()
                if (include_superseded or memory.is_latest)
                and (include_forgotten or not memory.is_forgotten)
            )
            if response.pagination is None or page >= int(response.pagination.total_pages or 1):
                break
            page += 1
        window = chosen[offset : offset + limit]
        gate = asyncio.Semaphore(RELATION_FETCHES)

        async def relations(memory_id: str) -> tuple[Relation, ...]:
            async with gate:
                details = await self.details(ns, memory_id, deadline)
            return relations_of(details.included, version=version_of(details))

        found = await asyncio.gather(*(relations(m.id) for m in window))
        return list(zip(window, found, strict=True))

    async def _page(self, ns: str, page: int, include_forgotten: bool, attempt_s: float) -> Any:
        return await self._client.list(
            ns,
            "memories",
            page=page,
            limit=PAGE,
            sort="createdAt",
            order="asc",
            include=cast("Any", {"forgotten": include_forgotten}),
            timeout=attempt_s,
        )

    async def details(
        self, ns: str, memory_id: str, deadline: Deadline, *, related: bool = True
    ) -> Any:
        include = ["related"] if related else None
        try:
            return await call(
                "memories.get",
                lambda t: self._client.memories.get(ns, memory_id, include=include, timeout=t),
                self._policy,
                deadline,
            )
        except MemoryNotFoundError:
            raise MemoryNotFoundError(f"memory {memory_id}") from None

    async def forget(
        self, ns: str, ids: list[str], deadline: Deadline
    ) -> tuple[list[str], list[str]]:
        """Soft-forgets `ids`; returns (forgotten, missing), both in the order given."""
        missing: set[str] = set()
        for start in range(0, len(ids), FORGET_BATCH):
            attempt = partial(self._forget_batch, ns, ids[start : start + FORGET_BATCH])
            result = await call("memories.forget", attempt, self._policy, deadline)
            missing |= {error.id for error in result.errors or ()}
        return [i for i in ids if i not in missing], [i for i in ids if i in missing]

    async def _forget_batch(self, ns: str, ids: list[str], attempt_s: float) -> Any:
        return await self._client.memories.forget(ns, ids=ids, timeout=attempt_s)
