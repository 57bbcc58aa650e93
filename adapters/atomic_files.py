"""Files written whole or not at all: to a temporary name in the same directory, synced, then
renamed, so that a reader (another process among them) never sees half a file.

A process killed while it writes (SIGKILL, the host's out-of-memory killer, a power cut) runs
no clean-up, and its temporary file (up to the whole table's size) would stay in the directory
for good: the next write of the same file removes the temporaries of that name that nobody has
written to for `ABANDONED_AFTER_S`. A live writer's file is younger: it grows until it is
renamed, and a kept file is written in seconds.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import structlog

log = structlog.get_logger(__name__)

ABANDONED_AFTER_S = 600.0


def temporary_prefix(path: Path) -> str:
    """The name every temporary file of `path` starts with (hidden, beside it)."""
    return f".{path.name}."


def remove_abandoned(path: Path, older_than_s: float = ABANDONED_AFTER_S) -> int:
    """Removes the temporary files of `path` untouched for `older_than_s` seconds (a writer
    killed before it could clean up); returns how many went. One that cannot be read or
    removed is left: clean-up never stops a write."""
    prefix = temporary_prefix(path)
    cutoff = time.time() - older_than_s
    removed = 0
    try:
        candidates = [p for p in path.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return 0
    for candidate in candidates:
        try:
            if candidate.is_file() and candidate.stat().st_mtime < cutoff:
                candidate.unlink()
                removed += 1
        except OSError as error:  # gone meanwhile, or not ours to remove
            log.debug(
                "atomic_file.abandoned_kept", file=candidate.name, error_type=type(error).__name__
            )
    if removed:
        log.info("atomic_file.abandoned_removed", file=path.name, count=removed)
    return removed


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Writes `path` with `write`; on any failure the temporary file is removed and the
    error raised, and an earlier `path` is left as it was. Temporaries of `path` that a killed
    writer left are removed first (`remove_abandoned`)."""
    remove_abandoned(path)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=temporary_prefix(path))
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
