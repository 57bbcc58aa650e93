"""A `MemoryBackend` wrapper that stalls (38 s by default, the incident behind the budgets)
or raises on chosen calls, to prove that recall fails open within its budget."""

from __future__ import annotations

import asyncio
from enum import StrEnum

from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    BackendHealth,
    MemoryFact,
    Namespace,
    SearchHit,
    SearchQuery,
)

INCIDENT_STALL_S = 38.0


class Fault(StrEnum):
    NONE = "none"
    STALL = "stall"  # sleep `stall_s`, then answer normally
    RAISE = "raise"  # raise MemoryUnavailableError at once


class StallingBackend(ForwardingMemoryBackend):
    """Delegates to `inner`; reads (`search`, `get_memory`, `list_memories`) obey `fault`,
    and so does `health` when it is among `faulty_calls`.

    - `faulty_calls` narrows which reads misbehave; writes always pass through.
    - `calls` counts the faulty reads started; `cancelled` those cancelled mid-stall.
    """

    def __init__(
        self,
        inner: MemoryBackend,
        *,
        fault: Fault = Fault.STALL,
        stall_s: float = INCIDENT_STALL_S,
        faulty_calls: frozenset[str] = frozenset({"search", "get_memory", "list_memories"}),
    ) -> None:
        super().__init__(inner)
        self.name = f"stalling:{inner.name}"
        self.fault = fault
        self.stall_s = stall_s
        self.faulty_calls = faulty_calls
        self.calls = 0
        self.cancelled = 0

    async def _misbehave(self, call: str) -> None:
        if self.fault is Fault.NONE or call not in self.faulty_calls:
            return
        self.calls += 1
        if self.fault is Fault.RAISE:
            raise MemoryUnavailableError(f"{call}: injected outage")
        try:
            await asyncio.sleep(self.stall_s)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        await self._misbehave("search")
        return await super().search(namespace, query)

    async def list_memories(
        self,
        namespace: Namespace,
        *,
        include_superseded: bool = True,
        include_forgotten: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryFact]:
        await self._misbehave("list_memories")
        return await super().list_memories(
            namespace,
            include_superseded=include_superseded,
            include_forgotten=include_forgotten,
            limit=limit,
            offset=offset,
        )

    async def get_memory(self, namespace: Namespace, memory_id: str) -> MemoryFact:
        await self._misbehave("get_memory")
        return await super().get_memory(namespace, memory_id)

    async def health(self) -> BackendHealth:
        await self._misbehave("health")
        return await super().health()
