"""`ImportPositions` in process memory: tests and the in-memory ledger (gone at exit, like it)."""

from __future__ import annotations

import asyncio

from factledger.application.importing.positions import ImportPosition


class InMemoryImportPositions:
    def __init__(self) -> None:
        self._positions: dict[tuple[str, str], ImportPosition] = {}
        self._lock = asyncio.Lock()

    async def get(self, tenant: str, import_id: str) -> ImportPosition | None:
        return self._positions.get((tenant, import_id))

    async def save(self, tenant: str, import_id: str, position: ImportPosition) -> bool:
        async with self._lock:
            saved = self._positions.get((tenant, import_id))
            if saved is not None and saved.line > position.line:
                return False
            self._positions[(tenant, import_id)] = position
            return True
