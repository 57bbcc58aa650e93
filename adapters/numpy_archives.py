"""`open_archive`: every NumPy archive (`.npz`) the product reads, read one at a time
(`reading_alone` for a library that opens its own; `map_array` for a mapped `.npy` file).

NumPy parses each member's header with `ast.literal_eval`. CPython 3.11 before 3.11.8 keeps
the AST constructor's recursion count in state the whole interpreter shares, and a garbage
collection in the middle of one thread's parse can let another thread's parse run in between:
the first then fails with `SystemError: AST constructor recursion depth mismatch` (CPython
issue 106905). The service loads its models on threads side by side (the embedder beside the
answer files at start-up, a head on its first request), and a load that fails so stays failed
for the process's life. One lock around every reading keeps two of ours from overlapping.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

# Re-entrant: a reading that opens another archive while it reads must not wait on itself.
_READING = threading.RLock()


@contextmanager
def reading_alone() -> Iterator[None]:
    """A block in which no other reading of ours runs: around a library's own loading of an
    archive (the packaged encoder's)."""
    with _READING:
        yield


@contextmanager
def open_archive(source: bytes | Path) -> Iterator[NpzFile]:
    """The archive in `source` (its bytes, or a file), members read while the block runs;
    pickled members are refused."""
    opened = io.BytesIO(source) if isinstance(source, bytes) else source
    with reading_alone(), np.load(opened, allow_pickle=False) as archive:
        yield archive


def map_array(path: Path) -> npt.NDArray[Any]:
    """The array in the `.npy` file at `path`, mapped read-only (its pages the file's, shared
    with every process that maps it); its header is parsed as an archive member's is, alone."""
    with reading_alone():
        mapped: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    return mapped
