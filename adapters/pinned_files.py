"""Reading a model file the product ships (or a deployment brings) against its pinned SHA-256."""

from __future__ import annotations

import hashlib
from pathlib import Path


def read_pinned(path: Path, sha256: str | None, error: type[Exception], what: str) -> bytes:
    """The file's bytes once their SHA-256 is `sha256` (None: a deployment's own file, read as
    it is); otherwise `error`, naming `what` and the file (a missing or unreadable file too)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{what} not readable: {path.name}") from exc
    if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
        raise error(f"{what} {path.name}: sha256 differs from the pin")
    return raw
