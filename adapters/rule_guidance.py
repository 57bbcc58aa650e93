"""Extraction guidance: slots, trigger phrases and derivation rules, loaded from YAML.

The guidance is product configuration (`extraction_guidance.yaml` ships as the default); the
rule extractor is generic code that only interprets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

DEFAULT_GUIDANCE = "extraction_guidance.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NAME_WORD = r"(?:[A-Z][\w&'-]*\.?|[0-9][\w-]*)"
_NAME_BODY = rf"(?-i:{_NAME_WORD}(?:\s+(?:{_NAME_WORD}|&|of|de|la|von|van)){{0,3}})"
_CLAUSE_END = r"(?=\s+(?:and|but|so|which|who|though|although|then|or)\b|\s*[,.;:!?]|\s*$)"
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    "forty|fifty|sixty|seventy|eighty|ninety|a hundred|a dozen"
)
MACROS = {
    "{WE}": r"(?:I|we)",
    "{NAME}": rf"(?P<value>{_NAME_BODY})",
    "{OTHER_NAME}": _NAME_BODY,
    "{VALUE}": rf"(?P<value>[^,.;:!?]+?){_CLAUSE_END}",
    "{MONEY}": (
        r"(?P<value>(?:[$€£]\s?)?\d[\d,.]*(?:\s?(?:k|m|bn|thousand|million))?\b"
        r"(?:\s?(?:USD|EUR|GBP|dollars|euros|pounds))?"
        r"(?:\s(?:a|per) (?:month|year|quarter|week))?)"
    ),
    "{NUM}": rf"(?P<value>\d[\d,]*|{_NUMBER_WORDS})",
    "{ADV}": r"(?:(?:really|actually|absolutely|also|just|still|totally|truly|honestly|strongly|"
    r"genuinely|do|definitely|always) )*",
}


class GuidanceError(ValueError):
    """The guidance file is malformed; the message names the entry, never user content."""


@dataclass(frozen=True, slots=True)
class SlotPattern:
    regex: re.Pattern[str]
    text: str


@dataclass(frozen=True, slots=True)
class SlotSpec:
    """A kind of fact. Single-valued slots hold one current value (a new one updates it)."""

    name: str
    single_valued: bool
    patterns: tuple[SlotPattern, ...]
    update_markers: bool = True  # whether "now", "switched", ... make its facts updates


@dataclass(frozen=True, slots=True)
class Requirement:
    slot: str | None
    updates: bool
    any_words: frozenset[str]


@dataclass(frozen=True, slots=True)
class Derivation:
    name: str
    slot: str
    text: str
    requires: tuple[Requirement, ...]


@dataclass(frozen=True, slots=True)
class Guidance:
    hedges: tuple[str, ...]
    condition_openers: tuple[str, ...]
    reason_openers: tuple[str, ...]
    update_markers: re.Pattern[str]
    filler: tuple[re.Pattern[str], ...]
    slots: tuple[SlotSpec, ...]
    derivations: tuple[Derivation, ...]
    question_topics: tuple[re.Pattern[str], ...]
    llm_instructions: str

    def slot(self, name: str) -> SlotSpec | None:
        return next((s for s in self.slots if s.name == name), None)


def load_guidance(path: Path | None = None) -> Guidance:
    """Loads a guidance file; without a path, the default shipped with the package (parsed
    once per process: it is immutable, and every backend builds a `RuleExtractor`)."""
    if path is None:
        return _packaged_guidance()
    return _parse_text(path.read_text(encoding="utf-8"))


@cache
def _packaged_guidance() -> Guidance:
    return _parse_text(
        files("factledger.adapters").joinpath(DEFAULT_GUIDANCE).read_text(encoding="utf-8")
    )


def _parse_text(raw: str) -> Guidance:
    data = yaml.load(raw, Loader=_LOADER)  # noqa: S506 - a safe loader, the C one when built
    if not isinstance(data, dict):
        raise GuidanceError("guidance: the top level must be a mapping")
    return parse_guidance(data)


def parse_guidance(data: dict[str, Any]) -> Guidance:
    return Guidance(
        hedges=_strings(data, "hedges"),
        condition_openers=_strings(data, "condition_openers"),
        reason_openers=_strings(data, "reason_openers"),
        update_markers=_word_alternation(_strings(data, "update_markers")),
        filler=tuple(_compile(f"^(?:{p})$", "filler") for p in _strings(data, "filler")),
        slots=tuple(_slot(entry) for entry in data.get("slots", [])),
        derivations=tuple(_derivation(entry) for entry in data.get("derivations", [])),
        question_topics=tuple(
            _compile(p, "question_topics") for p in _strings(data, "question_topics")
        ),
        llm_instructions=str(data.get("llm_instructions", "")),
    )


def expand_macros(pattern: str) -> str:
    for macro, regex in MACROS.items():
        pattern = pattern.replace(macro, regex)
    return pattern


def _slot(entry: Any) -> SlotSpec:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise GuidanceError("slots: each entry needs a name")
    name = entry["name"]
    patterns = []
    for item in entry.get("patterns", []):
        regex = _compile(expand_macros(str(item["match"])), f"slots.{name}")
        if "value" not in regex.groupindex:
            raise GuidanceError(f"slots.{name}: a pattern does not capture (?P<value>...)")
        patterns.append(SlotPattern(regex=regex, text=str(item["text"])))
    return SlotSpec(
        name=name,
        single_valued=bool(entry.get("single_valued", True)),
        patterns=tuple(patterns),
        update_markers=bool(entry.get("update_markers", True)),
    )


def _derivation(entry: Any) -> Derivation:
    if not isinstance(entry, dict) or not entry.get("requires"):
        raise GuidanceError("derivations: each entry needs requirements")
    name = str(entry["name"])
    requires = tuple(
        Requirement(
            slot=req.get("slot"),
            updates=bool(req.get("updates", False)),
            any_words=frozenset(str(w).lower() for w in req.get("any_words", [])),
        )
        for req in entry["requires"]
    )
    return Derivation(
        name=name, slot=str(entry["slot"]), text=str(entry["text"]), requires=requires
    )


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GuidanceError(f"{key}: must be a list of strings")
    return tuple(value)


def _word_alternation(words: tuple[str, ...]) -> re.Pattern[str]:
    if not words:
        return re.compile(r"(?!x)x")  # matches nothing
    alternation = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternation})\b", re.IGNORECASE)


def _compile(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise GuidanceError(f"{where}: invalid pattern ({exc.msg})") from exc
