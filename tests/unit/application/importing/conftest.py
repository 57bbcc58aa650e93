"""A POPO ledger, the rule-based safety filter and in-memory positions, and a way to import
bytes through `HistoryImport` as the CLI and the HTTP API do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.import_positions import InMemoryImportPositions
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.importing.importer import (
    HistoryImport,
    ImportOptions,
    ImportPorts,
    OnError,
)
from factledger.application.importing.lines import NumberedLine, split_lines
from factledger.application.importing.report import ImportReport
from factledger.application.ledger.ledger import Ledger
from factledger.testing.manual_clock import ManualClock

TENANT = "acme"


async def stream(data: bytes, *, chunk: int = 4096) -> AsyncIterator[NumberedLine]:
    for line in split_lines(data[i : i + chunk] for i in range(0, len(data), chunk)):
        yield line


@dataclass
class Importer:
    ledger: Ledger
    positions: InMemoryImportPositions
    clock: ManualClock

    def use_case(self) -> HistoryImport:
        return HistoryImport(
            ImportPorts(self.ledger, DetectorSafetyFilter(), self.positions, self.clock)
        )

    async def run(
        self,
        data: bytes,
        *,
        import_id: str | None = "file-1",
        on_error: OnError = OnError.SKIP,
        checkpoint_lines: int = 100,
        tenant: str = TENANT,
    ) -> ImportReport:
        options = ImportOptions(tenant, import_id, on_error, checkpoint_lines)
        return await self.use_case().run(stream(data), options)

    def event_count(self) -> int:
        return int(self.ledger.recorder.max_notification_id() or 0)


@pytest.fixture
def importer() -> Iterator[Importer]:
    clock = ManualClock()
    ledger = Ledger(popo_env(), clock=clock, keys=InMemoryKeyStore())
    yield Importer(ledger, InMemoryImportPositions(), clock)
    ledger.close()
