"""`extends:` in guidance files: a guidance that adds to another instead of copying it.

A file says `extends: default` (a packaged guidance by name: `default`, `sales_discovery`,
`support_ticket`) or `extends: ./base.yaml` (a file, relative to the extending one). The
parent is read first (it may extend another in turn), then the child is laid over it:

- word and phrase lists (hedges, openers, update markers, filler, question topics): the
  child's entries are added after the parent's, each once;
- slots: a slot of a new name is added before the parent's slots; a slot the parent has gets
  the child's patterns first, and the child's `single_valued` / `update_markers` when it sets
  them; a slot the child leaves alone is marked one level further `inherited`, and where
  slots of different levels match the same words the rule extractor keeps the child's own
  (the conversation type's `issue` over the default's generic `complaint`);
- derivations: one of a new name is added, one of the parent's name replaces it;
- `llm_instructions`: the child's text follows the parent's, so tailored instructions only
  say what is particular to them.

Works on the parsed YAML before validation, so the merged document is checked as a whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

PACKAGE = "factledger.adapters.extraction.rules"
DEFAULT_FILE = "guidance.yaml"
PACKAGED = ("default", "sales_discovery", "support_ticket")
MAX_DEPTH = 8
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LISTS = (
    "hedges",
    "condition_openers",
    "reason_openers",
    "update_markers",
    "filler",
    "question_topics",
)


_Combine = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]


class GuidanceInheritanceError(ValueError):
    """An `extends:` cannot be followed; the message names the reference, never content."""


def packaged_text(name: str) -> str:
    """The text of a packaged guidance (`default` is `guidance.yaml`)."""
    if name not in PACKAGED:
        raise GuidanceInheritanceError(f"extends: no packaged guidance is named {name!r}")
    file = DEFAULT_FILE if name == "default" else f"{name}.yaml"
    return files(PACKAGE).joinpath(file).read_text(encoding="utf-8")


def parse_yaml(raw: str) -> dict[str, Any]:
    data = yaml.load(raw, Loader=_LOADER)  # noqa: S506 - a safe loader, the C one when built
    if not isinstance(data, dict):
        raise GuidanceInheritanceError("guidance: the top level must be a mapping")
    return data


def resolve(data: dict[str, Any], *, base_dir: Path | None, depth: int = 0) -> dict[str, Any]:
    """`data` with its `extends:` chain merged in (and the key removed)."""
    reference = data.get("extends")
    if reference is None:
        return data
    if not isinstance(reference, str) or not reference.strip():
        raise GuidanceInheritanceError("extends: must name a packaged guidance or a file")
    if depth >= MAX_DEPTH:
        raise GuidanceInheritanceError(f"extends: deeper than {MAX_DEPTH} levels (a cycle?)")
    child = {k: v for k, v in data.items() if k != "extends"}
    if reference in PACKAGED:
        parent = resolve(parse_yaml(packaged_text(reference)), base_dir=None, depth=depth + 1)
    else:
        path = Path(reference)
        if not path.is_absolute():
            if base_dir is None:
                raise GuidanceInheritanceError("extends: a packaged guidance names only packaged")
            path = base_dir / path
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise GuidanceInheritanceError("extends: the file cannot be read") from exc
        parent = resolve(parse_yaml(text), base_dir=path.parent, depth=depth + 1)
    return merge(parent, child)


def merge(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """`child` laid over `parent` (see the module's rules)."""
    merged = dict(parent)
    for key, value in child.items():
        if key in _LISTS:
            before = list(parent.get(key) or [])
            merged[key] = before + [v for v in value or [] if v not in before]
        elif key == "slots":
            inherited = [_inherited(e) for e in parent.get(key) or []]
            merged[key] = _merge_named(inherited, value or [], _merge_slot)
        elif key == "derivations":
            merged[key] = _merge_named(parent.get(key) or [], value or [], lambda _, new: new)
        elif key == "llm_instructions":
            texts = [t.rstrip("\n") for t in (parent.get(key), value) if t]
            merged[key] = "\n\n".join(texts) + "\n" if texts else ""
        else:
            merged[key] = value
    return merged


def _inherited(entry: Any) -> Any:
    """A parent's slot one level further from the guidance being read."""
    if not isinstance(entry, dict):
        return entry  # validation rejects it
    return {**entry, "inherited": int(entry.get("inherited") or 0) + 1}


def _merge_slot(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    slot = {**old, **{k: v for k, v in new.items() if k != "patterns"}, "inherited": 0}
    slot["patterns"] = list(new.get("patterns") or []) + list(old.get("patterns") or [])
    return slot


def _merge_named(old: list[Any], new: list[Any], combine: _Combine) -> list[Any]:
    """Entries by `name`: a known one is combined in place, new ones come first (the rule
    extractor keeps the first of two equally long matches, so the child's win a tie)."""
    result = list(old)
    positions = {e.get("name"): i for i, e in enumerate(result) if isinstance(e, dict)}
    added = []
    for entry in new:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name in positions:
            result[positions[name]] = combine(result[positions[name]], entry)
        else:
            added.append(entry)
    return added + result
