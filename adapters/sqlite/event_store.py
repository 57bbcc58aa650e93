"""The ledger's event store in a SQLite file (the embedded default), in the `eventsourcing`
library's terms."""

from __future__ import annotations

from pathlib import Path


def sqlite_env(path: Path) -> dict[str, str]:
    """A SQLite file, the embedded default. The library always names the tables
    `stored_events`, so the file must belong to the ledger alone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": "10",
    }
