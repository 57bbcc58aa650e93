"""The import position port: where each import stands, so a crashed one resumes.

An import is named by the caller's id or by its file's content hash, within one tenant. Its
position is the last line handled (recorded, found unchanged, or reported bad), the digest of
the lines up to it (`lines.py`) and the report so far. Lines up to the position are not
recorded again on resume; the ones after it are, and recording is idempotent, so a position
saved a little behind the ledger (the import saves it every few sessions) costs only a
re-check of those sessions, never a duplicate.

Adapters: in-memory, SQLite (beside the embedded default's ledger) and PostgreSQL (beside its
event store); one contract suite (tests/contracts/test_import_positions_contract.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from factledger.application.errors import StoreUnavailableError


class ImportPositionsUnavailableError(StoreUnavailableError):
    """The position store's database failed; the driver error is kept as `__cause__`."""


@dataclass(frozen=True, slots=True)
class ImportPosition:
    line: int
    digest: str  # sha256 of lines 1..line
    report: dict[str, Any]  # `ImportReport.to_json()` at that line
    finished: bool = False


class ImportPositions(Protocol):
    """Positions per (tenant, import id), durable across processes.

    - `get` returns the saved position, or None when the import never saved one.
    - `save` stores a position unless a later one (a higher line) is saved already, which a
      slower twin must never overwrite; it returns whether it stored it. Saving the same line
      again (the finished mark) stores it.
    - One tenant never sees another's positions, whatever the import id.
    """

    async def get(self, tenant: str, import_id: str) -> ImportPosition | None: ...

    async def save(self, tenant: str, import_id: str, position: ImportPosition) -> bool: ...
