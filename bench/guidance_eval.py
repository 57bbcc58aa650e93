"""Scores each extraction guidance on its own labelled cases: one line per guidance.

- The default guidance is scored on the main set (`tests/data/extraction_set.yaml`); each
  other guidance on `tests/data/extraction_sets/<name>.yaml`, whose cases are extracted with
  the context `conversation_type: <name>` (so the catalogue routes them to that guidance).
- A guidance set may say `score: slotted`: facts without a slot are left out before scoring,
  since general notes are the default guidance's and the main set measures them.
- Dev (cases without the `heldout` tag) and held-out cases are reported apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from factledger.application.memory.extraction import ExtractionContext
from factledger.application.memory.ports import Extractor
from factledger.bench.extraction_eval import (
    ExtractionCase,
    ExtractionScores,
    parse_cases,
    score_case,
    summarise,
)

HELD_OUT = "heldout"
DEFAULT_NAME = "default"


@dataclass(frozen=True, slots=True)
class GuidanceSet:
    """The labelled cases of one guidance."""

    name: str
    cases: tuple[ExtractionCase, ...]
    slotted_only: bool = False


@dataclass(frozen=True, slots=True)
class GuidanceScores:
    name: str
    dev: ExtractionScores
    held_out: ExtractionScores

    def line(self) -> str:
        def part(s: ExtractionScores) -> str:
            return f"P {s.precision.value:.2f} R {s.recall.value:.2f} ({s.cases} cases)"

        return f"{self.name:<16} dev {part(self.dev)}   held-out {part(self.held_out)}"


def guidance_set(name: str, data: Sequence[Any] | Mapping[str, Any]) -> GuidanceSet:
    """A set from parsed YAML: a list of cases (the main set's shape), or a mapping with
    `cases` and optionally `score: slotted`. Cases of a guidance other than the default get
    its conversation type as their context."""
    if isinstance(data, Mapping):
        raw, slotted = data["cases"], data.get("score") == "slotted"
    else:
        raw, slotted = data, False
    cases = parse_cases(raw)
    if name != DEFAULT_NAME:
        context = ExtractionContext(conversation_type=name)
        cases = [replace(c, request=replace(c.request, context=context)) for c in cases]
    return GuidanceSet(name, tuple(cases), slotted_only=slotted)


def load_guidance_set(path: Path, name: str | None = None) -> GuidanceSet:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return guidance_set(name or path.stem, data)


def guidance_sets(default_set: Path, directory: Path | None) -> list[GuidanceSet]:
    """The default guidance's set, then one per YAML file of `directory`, by name."""
    sets = [load_guidance_set(default_set, DEFAULT_NAME)]
    if directory is not None and directory.is_dir():
        sets += [load_guidance_set(p) for p in sorted(directory.glob("*.yaml"))]
    return sets


async def evaluate_set(
    extractor: Extractor, labelled: GuidanceSet, *, tag: str | None = None
) -> GuidanceScores:
    results = []
    for case in labelled.cases:
        if tag is not None and tag not in case.tags:
            continue
        facts = await extractor.extract(case.request)
        if labelled.slotted_only:
            facts = [f for f in facts if f.slot is not None]
        results.append(score_case(case, facts))
    held = [r for r in results if HELD_OUT in r.case.tags]
    dev = [r for r in results if HELD_OUT not in r.case.tags]
    return GuidanceScores(labelled.name, summarise(dev), summarise(held))
