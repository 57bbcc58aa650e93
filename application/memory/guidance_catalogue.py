"""Which extraction guidance a transcript gets: routes from context selectors to guidance names.

Pure data and rules; the extractors hold the guidance the names stand for.

- A route names a guidance and selects on any of tenant, subject kind, channel and
  conversation type; a part it leaves out matches every context.
- Among the routes that match a context, the most specific wins: the one that sets the most
  parts; a tie goes to the route whose parts rank higher, conversation type first, then
  subject kind, channel and tenant (`PRECEDENCE`). Two routes setting the same parts to the
  same values are a configuration error, so no tie is ever left to order.
- No route matches: the default guidance (`DEFAULT_GUIDANCE`).
- A conversation type is known to a tenant when a route that names it applies to the tenant
  (its tenant is unset or the same); a session may only be started with a known one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from factledger.application.errors import ApplicationError
from factledger.application.memory.extraction import ExtractionContext

DEFAULT_GUIDANCE = "default"
CONVERSATION_TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
# The order in which a route's parts break a tie of specificity: what is said in a sales call
# depends on its being a sales call more than on who holds the account.
PRECEDENCE = ("conversation_type", "subject_kind", "channel", "tenant")


class GuidanceCatalogueError(ApplicationError):
    """The routes contradict each other; the message names the parts, never content."""


class UnknownConversationTypeError(ApplicationError):
    """A session names a conversation type that no guidance of its tenant knows (HTTP 422)."""

    def __init__(self, rule: str) -> None:
        super().__init__(f"conversation_type: {rule}")
        self.field = "conversation_type"


def check_conversation_type(value: str) -> str:
    """A conversation type is a lower-case slug (`sales_discovery`)."""
    if not CONVERSATION_TYPE_PATTERN.fullmatch(value):
        raise UnknownConversationTypeError("must match ^[a-z][a-z0-9_]{0,62}$")
    return value


@dataclass(frozen=True, slots=True)
class GuidanceRoute:
    """Contexts matching every part that is set get the guidance named `guidance`."""

    guidance: str
    tenant: str | None = None
    subject_kind: str | None = None
    channel: str | None = None
    conversation_type: str | None = None

    def matches(self, context: ExtractionContext) -> bool:
        return all(
            (want := getattr(self, part)) is None or want == getattr(context, part)
            for part in PRECEDENCE
        )

    @property
    def selector(self) -> tuple[str | None, ...]:
        return tuple(getattr(self, part) for part in PRECEDENCE)

    @property
    def rank(self) -> tuple[int, tuple[bool, ...]]:
        """Higher is more specific: how many parts are set, then which (`PRECEDENCE`)."""
        set_parts = tuple(getattr(self, part) is not None for part in PRECEDENCE)
        return (sum(set_parts), set_parts)


@dataclass(frozen=True, slots=True)
class GuidanceCatalogue:
    """The routes of one deployment; `choose` names the guidance for a context."""

    routes: tuple[GuidanceRoute, ...] = ()

    def __post_init__(self) -> None:
        seen: set[tuple[str | None, ...]] = set()
        for route in self.routes:
            if route.selector in seen:
                raise GuidanceCatalogueError("guidance routes: two routes select the same parts")
            seen.add(route.selector)
            if route.conversation_type is not None:
                check_conversation_type(route.conversation_type)

    @classmethod
    def merged(
        cls, built_in: Iterable[GuidanceRoute], configured: Iterable[GuidanceRoute]
    ) -> GuidanceCatalogue:
        """The configured routes, plus each built-in one no configured route replaces (the
        same selector)."""
        mine = tuple(configured)
        taken = {r.selector for r in mine}
        return cls(mine + tuple(r for r in built_in if r.selector not in taken))

    def choose(self, context: ExtractionContext) -> str:
        """The name of the guidance for `context`: the most specific matching route's."""
        matching = [r for r in self.routes if r.matches(context)]
        if not matching:
            return DEFAULT_GUIDANCE
        return max(matching, key=lambda r: r.rank).guidance

    def guidance_names(self) -> frozenset[str]:
        return frozenset({DEFAULT_GUIDANCE, *(r.guidance for r in self.routes)})

    def conversation_types(self, tenant: str) -> frozenset[str]:
        """The conversation types `tenant`'s sessions may name."""
        return frozenset(
            r.conversation_type
            for r in self.routes
            if r.conversation_type is not None and r.tenant in {None, tenant}
        )

    def check_known(self, tenant: str, conversation_type: str) -> str:
        """`conversation_type` if it is a slug the tenant's guidance knows, else raises
        `UnknownConversationTypeError`."""
        check_conversation_type(conversation_type)
        if conversation_type not in self.conversation_types(tenant):
            raise UnknownConversationTypeError("no extraction guidance of this tenant knows it")
        return conversation_type
