"""What a backend reports of its erasure compaction: when it last rewrote the tables it erased
from, and how long the oldest erasure not yet compacted has waited (the bound the README
states: about one compaction interval, one more for a table whose lock was busy)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class CompactionStatus:
    last_compacted_at: datetime | None  # None: never compacted
    oldest_pending_at: datetime | None  # the first erasure since, still in the pages; None: none
    pending_tables: int


@runtime_checkable
class ReportsCompaction(Protocol):
    async def compaction_status(self) -> CompactionStatus: ...
