"""`RoutedGuidance`: every guidance a deployment routes to, compiled once, chosen per context.

Names in the catalogue's routes are packaged guidance names (`sales_discovery`,
`support_ticket`) or paths of guidance files (ending in `.yaml` or `.yml`); `default` is the
packaged default unless the deployment overrides it (`RuleExtractorSettings.guidance_path`).
Out of the box each packaged conversation type is routed to its packaged guidance
(`built_in_routes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from factledger.adapters.extraction.rules.guidance import (
    Guidance,
    GuidanceError,
    load_guidance,
    load_packaged_guidance,
)
from factledger.adapters.extraction.rules.inheritance import PACKAGED
from factledger.application.memory.extraction import ExtractionContext
from factledger.application.memory.guidance_catalogue import (
    DEFAULT_GUIDANCE,
    GuidanceCatalogue,
    GuidanceRoute,
)

PACKAGED_CONVERSATION_TYPES = tuple(name for name in PACKAGED if name != DEFAULT_GUIDANCE)


def built_in_routes() -> tuple[GuidanceRoute, ...]:
    """`conversation_type: X` -> the packaged guidance `X`, for each packaged type."""
    return tuple(
        GuidanceRoute(name, conversation_type=name) for name in PACKAGED_CONVERSATION_TYPES
    )


def is_guidance_file(name: str) -> bool:
    return name.endswith((".yaml", ".yml"))


class _Guidances(Mapping[str, Guidance]):
    """The compiled guidance of each routed name. A deployment's own files are compiled when
    it is made (a bad file fails the start); the packaged guidances, which our tests compile,
    when a context first asks for one: compiling them all (their regular expressions mostly)
    was a twentieth of a start's CPU, and most deployments use one or two."""

    def __init__(self, names: Iterable[str], default_path: Path | None) -> None:
        self._default_path = default_path
        self._names = tuple(names)
        self._compiled = {
            name: _load(name, default_path)
            for name in self._names
            if not _is_packaged(name, default_path)
        }

    def __getitem__(self, name: str) -> Guidance:
        found = self._compiled.get(name)
        if found is None:
            if name not in self._names:
                raise KeyError(name)
            found = self._compiled[name] = _load(name, self._default_path)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _is_packaged(name: str, default_path: Path | None) -> bool:
    if name == DEFAULT_GUIDANCE:
        return default_path is None
    return name in PACKAGED


def _load(name: str, default_path: Path | None) -> Guidance:
    if name == DEFAULT_GUIDANCE:
        return load_guidance(default_path)
    if name in PACKAGED:
        return load_packaged_guidance(name)
    if is_guidance_file(name):
        return load_guidance(Path(name))
    raise GuidanceError(f"guidance routes: {name!r} is neither packaged nor a .yaml file")


@dataclass(frozen=True, slots=True)
class RoutedGuidance:
    """The catalogue and the compiled guidance of each name it routes to."""

    catalogue: GuidanceCatalogue
    guidances: Mapping[str, Guidance]

    @classmethod
    def load(
        cls,
        routes: Iterable[GuidanceRoute] = (),
        *,
        default_path: Path | None = None,
        built_in: bool = True,
    ) -> RoutedGuidance:
        """Reads and compiles every guidance file the routes name (a bad file fails here, at
        start-up, not on the first transcript that needs it); a packaged guidance is
        compiled when first asked for (`_Guidances`)."""
        catalogue = GuidanceCatalogue.merged(built_in_routes() if built_in else (), routes)
        names = sorted(catalogue.guidance_names())
        return cls(catalogue, _Guidances(names, default_path))

    @classmethod
    def single(cls, guidance: Guidance) -> RoutedGuidance:
        """One guidance for every context."""
        return cls(GuidanceCatalogue(), {DEFAULT_GUIDANCE: guidance})

    @property
    def default(self) -> Guidance:
        return self.guidances[DEFAULT_GUIDANCE]

    def name_for(self, context: ExtractionContext) -> str:
        return self.catalogue.choose(context)

    def for_context(self, context: ExtractionContext) -> Guidance:
        return self.guidances[self.name_for(context)]
