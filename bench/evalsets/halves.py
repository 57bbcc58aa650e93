"""A writer's line files split into a dev half and a held-out half by the SHA-256 of each
item's id: the same item always lands in the same half, whoever splits it."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import yaml


class HasId(Protocol):
    @property
    def id(self) -> str: ...


def in_dev_half(item_id: str) -> bool:
    """The half an item belongs to, by the SHA-256 of its id (even: dev)."""
    return hashlib.sha256(item_id.encode("utf-8")).digest()[-1] % 2 == 0


def split(
    source: Path, into: Path, load: Callable[[Sequence[Path]], Sequence[HasId]]
) -> dict[str, int]:
    """`source`'s `lines-*.yaml` copied into `into/dev` and `into/heldout` by `in_dev_half`,
    file by file (each item as written, in the writer's order); `load` validates a file
    before anything of it is written."""
    counts: Counter[str] = Counter()
    for path in sorted(source.glob("lines-*.yaml")):
        lines = load([path])
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for half in ("dev", "heldout"):
            kept = [
                r
                for r, line in zip(raw, lines, strict=True)
                if in_dev_half(line.id) == (half == "dev")
            ]
            (into / half).mkdir(parents=True, exist_ok=True)
            text = yaml.safe_dump(kept, allow_unicode=True, sort_keys=False, width=100)
            (into / half / path.name).write_text(text, encoding="utf-8")
            counts[half] += len(kept)
    return dict(counts)
