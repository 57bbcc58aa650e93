"""Extraction guidance: slots, trigger phrases and derivation rules, loaded from YAML.

The guidance is product configuration (`guidance.yaml` beside this module ships as the default); the
rule extractor is generic code that only interprets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factledger.adapters.extraction.rules.inheritance import (
    GuidanceInheritanceError,
    packaged_text,
    parse_yaml,
    resolve,
)

DEFAULT_GUIDANCE = "guidance.yaml"
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
    updates: bool = False  # the phrase itself states a change ("no longer likes")


@dataclass(frozen=True, slots=True)
class SlotSpec:
    """A kind of fact. Single-valued slots hold one current value (a new one updates it)."""

    name: str
    single_valued: bool
    patterns: tuple[SlotPattern, ...]
    update_markers: bool = True  # whether "now", "switched", ... make its facts updates
    # 0: a slot of the guidance itself (or one it extends); n: inherited from n levels up.
    # Of two slots matching the same words, the less inherited wins.
    inherited: int = 0


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
    """Loads a guidance file (following its `extends:`); without a path, the default shipped
    with the package (parsed once per process: it is immutable, and every backend builds a
    `RuleExtractor`)."""
    if path is None:
        return _packaged_guidance()
    return _parse_resolved(path.read_text(encoding="utf-8"), path.parent)


@cache
def load_packaged_guidance(name: str) -> Guidance:
    """A packaged guidance by name (`inheritance.PACKAGED`), parsed once per process."""
    if name == "default":
        return _packaged_guidance()
    return _parse_resolved(packaged_text(name), None)


def _parse_resolved(raw: str, base_dir: Path | None) -> Guidance:
    try:
        data = resolve(parse_yaml(raw), base_dir=base_dir)
    except GuidanceInheritanceError as exc:
        raise GuidanceError(str(exc)) from None
    return parse_guidance(data)


@cache
def _packaged_guidance() -> Guidance:
    return _parse_text(
        files("factledger.adapters.extraction.rules")
        .joinpath(DEFAULT_GUIDANCE)
        .read_text(encoding="utf-8")
    )


def _parse_text(raw: str) -> Guidance:
    data = yaml.load(raw, Loader=_LOADER)  # noqa: S506 - a safe loader, the C one when built
    if not isinstance(data, dict):
        raise GuidanceError("guidance: the top level must be a mapping")
    return parse_guidance(data)


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _PatternDoc(_Doc):
    match: str
    text: str
    updates: bool = False


class _SlotDoc(_Doc):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")
    single_valued: bool = True
    update_markers: bool = True
    patterns: list[_PatternDoc] = Field(default_factory=list)
    # Set by `extends:`, not by hand: how many levels up the slot was last written (0: in
    # the file itself). The rule extractor prefers the more specific slot.
    inherited: int = Field(default=0, ge=0)


class _RequirementDoc(_Doc):
    slot: str | None = None
    updates: bool = False
    any_words: list[str] = Field(default_factory=list)


class _DerivationDoc(_Doc):
    name: str
    slot: str
    text: str
    requires: list[_RequirementDoc] = Field(min_length=1)


class _GuidanceDoc(_Doc):
    version: Literal[1] = 1
    hedges: list[str] = Field(default_factory=list)
    condition_openers: list[str] = Field(default_factory=list)
    reason_openers: list[str] = Field(default_factory=list)
    update_markers: list[str] = Field(default_factory=list)
    filler: list[str] = Field(default_factory=list)
    slots: list[_SlotDoc] = Field(default_factory=list)
    derivations: list[_DerivationDoc] = Field(default_factory=list)
    question_topics: list[str] = Field(default_factory=list)
    llm_instructions: str = ""


def parse_guidance(data: dict[str, Any]) -> Guidance:
    """Validates parsed YAML (unknown keys are errors, so a typo never silently does nothing)
    and compiles its patterns."""
    try:
        doc = _GuidanceDoc.model_validate(data)
    except ValidationError as exc:
        # pydantic quotes the input; report where, not what
        where = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})
        raise GuidanceError(f"guidance: invalid entries at {', '.join(where)}") from None
    names = [slot.name for slot in doc.slots]
    if len(names) != len(set(names)):
        raise GuidanceError("slots: names must be unique")
    return Guidance(
        hedges=tuple(doc.hedges),
        condition_openers=tuple(doc.condition_openers),
        reason_openers=tuple(doc.reason_openers),
        update_markers=_word_alternation(tuple(doc.update_markers)),
        filler=tuple(_compile(f"^(?:{p})$", "filler") for p in doc.filler),
        slots=tuple(_slot(slot) for slot in doc.slots),
        derivations=tuple(_derivation(d) for d in doc.derivations),
        question_topics=tuple(_topic(p) for p in doc.question_topics),
        llm_instructions=doc.llm_instructions,
    )


def expand_macros(pattern: str) -> str:
    for macro, regex in MACROS.items():
        pattern = pattern.replace(macro, regex)
    return pattern


def _slot(doc: _SlotDoc) -> SlotSpec:
    patterns = []
    for item in doc.patterns:
        regex = _compile(expand_macros(item.match), f"slots.{doc.name}")
        if "value" not in regex.groupindex:
            raise GuidanceError(f"slots.{doc.name}: a pattern does not capture (?P<value>...)")
        try:
            item.text.format(value="")
        except (KeyError, IndexError, ValueError) as exc:
            raise GuidanceError(f"slots.{doc.name}: a text may only use {{value}}") from exc
        patterns.append(SlotPattern(regex=regex, text=item.text, updates=item.updates))
    return SlotSpec(doc.name, doc.single_valued, tuple(patterns), doc.update_markers, doc.inherited)


def _derivation(doc: _DerivationDoc) -> Derivation:
    requires = tuple(
        Requirement(r.slot, r.updates, frozenset(w.lower() for w in r.any_words))
        for r in doc.requires
    )
    return Derivation(name=doc.name, slot=doc.slot, text=doc.text, requires=requires)


def _topic(pattern: str) -> re.Pattern[str]:
    regex = _compile(pattern, "question_topics")
    if "topic" not in regex.groupindex:
        raise GuidanceError("question_topics: a pattern does not capture (?P<topic>...)")
    return regex


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
