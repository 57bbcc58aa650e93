"""The multilingual encoder's word-piece table kept on disk between starts (ADR 0197).

The package builds its 65 MB uint8 table by inflating seventeen compressed chunks of its
weights file and interleaving them: 0.41 s of a process's first multilingual encoding, which a
subject's first message after a start waits for. Kept as a plain `.npy` file and mapped into
memory, it opens in under a millisecond, its sha256 is read in 0.08 s, and every process of a
host shares its pages instead of holding a copy each.

- One file per pinned weights file and package version, beside a JSON card holding that key
  and the table's sha256. A card for another key is stale; a table whose bytes do not hash to
  its card is corrupt. Either is built again from the pinned weights and written over.
- Files are written whole or not at all (`atomic_files`), the table before its card, so a
  card never names a table that is not there yet.
- A cache directory that cannot be created, read or written costs only the time saved: the
  table is then built in memory, as without a cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import structlog

from factledger.adapters.atomic_files import write_atomically

log = structlog.get_logger(__name__)

# Bump whenever the table kept here is made differently from the same weights.
TABLE_FORMAT = 1

Table = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class TableKey:
    """What a kept table was built from."""

    weights_sha256: str
    package_version: str
    shape: tuple[int, int]
    form: int = TABLE_FORMAT

    @property
    def stem(self) -> str:
        return f"use-table-{self.weights_sha256[:16]}"


def cached_table(directory: Path | None, key: TableKey) -> Table | None:
    """The table kept for `key`, mapped read-only; None when missing, stale, corrupt or
    unreadable (the caller builds it and keeps it again)."""
    if directory is None:
        return None
    card_path = directory / f"{key.stem}.json"
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return _rejected("unreadable", card_path)
    if not isinstance(card, dict) or card.get("key") != json.loads(json.dumps(asdict(key))):
        return _rejected("stale", card_path)
    table_path = directory / f"{key.stem}.npy"
    try:
        table = np.load(table_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return _rejected("unreadable", table_path)
    if table.dtype != np.uint8 or table.shape != key.shape or not table.flags.c_contiguous:
        return _rejected("corrupt", table_path)
    try:
        digest = hashlib.sha256(table.data).hexdigest()
    except OSError:  # a page the disk can no longer read
        return _rejected("unreadable", table_path)
    if digest != card.get("sha256"):
        return _rejected("corrupt", table_path)
    kept: Table = table
    return kept


def keep_table(directory: Path | None, key: TableKey, table: Table) -> bool:
    """Keeps `table` for `key`; False (and a warning) when the directory is not writable."""
    if directory is None:
        return False
    card = {"key": asdict(key), "sha256": hashlib.sha256(table.data).hexdigest()}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(
            directory / f"{key.stem}.npy", lambda file: np.save(file, table, allow_pickle=False)
        )
        text = json.dumps(card).encode("utf-8")
        write_atomically(directory / f"{key.stem}.json", lambda file: file.write(text))
    except OSError as exc:
        log.warning("multilingual_table_cache_unwritable", error=type(exc).__name__)
        return False
    return True


def _rejected(reason: str, path: Path) -> Table | None:
    """Nothing to use: the caller builds the table and keeps it again."""
    log.info("multilingual_table_cache_rejected", reason=reason, file=path.name)
    return None
