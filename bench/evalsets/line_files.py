"""What the line sets (`lines-*.yaml`: one labelled message an item) share: reading a
writer's files with ids unique, the split into a dev half and a held-out half by the SHA-256 of
each item's id (the same item always lands in the same half, whoever splits it), and the
ratios their scores print."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml


class HasId(Protocol):
    @property
    def id(self) -> str: ...


Item = TypeVar("Item", bound=HasId)


def load_items(
    paths: Sequence[Path], parse: Callable[[object, str], Item], error: type[Exception]
) -> list[Item]:
    """Every item of the `lines-*.yaml` files under `paths` (directories or files), each read
    by `parse` (an item, its file's name); ids given twice raise `error`."""
    files = [f for p in paths for f in (sorted(p.glob("lines-*.yaml")) if p.is_dir() else [p])]
    items: list[Item] = []
    for path in files:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        items += [parse(item, path.name) for item in raw]
    seen = Counter(item.id for item in items)
    if twice := sorted(i for i, n in seen.items() if n > 1):
        raise error(f"ids given twice: {', '.join(twice[:5])}")
    return items


def ratio(part: int, whole: int) -> float | None:
    """`part / whole` to three places; None for an empty whole."""
    return round(part / whole, 3) if whole else None


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


Detail = list[dict[str, Any]]


def detail_for(dirs: Sequence[Path], path: Path | None, what: str) -> Detail | None:
    """A list to collect the items scored wrong when `path` asks for them (None when it does
    not); `SystemExit` when a held-out half is among `dirs`: its items are never read."""
    if path is None:
        return None
    if any("heldout" in d.parts for d in dirs):
        raise SystemExit(f"--detail reads the {what}: dev halves only")
    return []


def write_detail(path: Path | None, detail: Detail | None) -> None:
    """The items scored wrong, as JSON at `path` (nothing without one)."""
    if path is not None and detail is not None:
        path.write_text(json.dumps(detail, ensure_ascii=False, indent=1), encoding="utf-8")
