"""The ledger's event store in a SQLite file (the embedded default), in the `eventsourcing`
library's terms."""

from __future__ import annotations

from pathlib import Path

from factledger.adapters.sqlite.ledger_recorder import ResponseWritingRecorder
from factledger.adapters.sqlite.snapshot_recorder import FACTORY_TOPIC

RECORDER_TOPIC = f"{ResponseWritingRecorder.__module__}:{ResponseWritingRecorder.__qualname__}"


def sqlite_env(path: Path) -> dict[str, str]:
    """A SQLite file, the embedded default. The library always names the tables
    `stored_events`, so the file must belong to the ledger alone (and the saved responses of
    the commands that write their response with their events)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": FACTORY_TOPIC,
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": "10",
        "APPLICATION_RECORDER_TOPIC": RECORDER_TOPIC,
    }
