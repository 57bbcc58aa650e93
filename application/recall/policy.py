"""Recall policy: budgets, search defaults and the on/off switch, per deployment and tenant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Annotated

from annotated_types import Interval

from factledger.application.memory.types import MAX_LIMIT, SearchMode

Budget = Annotated[float, Interval(gt=0, le=30)]


@dataclass(frozen=True, slots=True)
class RecallPolicy:
    """How recall behaves for one tenant; the defaults are the product's promise.

    - `context_budget_s` bounds `session_context`, `recall_budget_s` bounds `recall`.
    - Search defaults: memories only, threshold 0.55 (calibrated relevance), at
      most 3 facts, inferred and superseded facts excluded.
    - `under_floor` (off by default): places a turn's notes leave empty take the search's
      rows under the threshold down to this calibrated relevance, best first (`recall.under`;
      ADR 0150 measured it at 0.1: more right notes, and more stale ones than its rule
      allowed); None: a turn serves only what reaches the threshold.
    - `withhold_third_parties` (off by default): a turn's memory notes that the statement
      head reads as a third party's fact are not served (`recall.others`, ADR 0154); it
      needs the deployment's sentence judge, and without one changes nothing.
    - Notes only by default: verbatim excerpts are a tenant's opt-in (`excerpts=True`) and
      then come in their own attributed field, never inside the notes.
    - Each field's bounds sit in its annotation (`annotated_types`, which pydantic reads), so
      the settings that configure a policy are derived from this class, field for field.
    """

    enabled: bool = True
    context_budget_s: Budget = 2.0
    recall_budget_s: Budget = 1.0
    mode: SearchMode = SearchMode.MEMORIES
    threshold: Annotated[float, Interval(ge=0, le=1)] = 0.55
    limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 3
    under_floor: Annotated[float, Interval(ge=0, le=1)] | None = None
    withhold_third_parties: bool = False
    include_inferred: bool = False
    include_superseded: bool = False
    recent_sessions: Annotated[int, Interval(ge=0, le=50)] = 3
    max_proposals: Annotated[int, Interval(ge=0, le=50)] = 5
    excerpts: bool = False
    excerpt_chars: Annotated[int, Interval(ge=1, le=10_000)] = 280


def policy_of(view: RecallPolicy) -> RecallPolicy:
    """The plain policy held by `view` (an instance of a subclass that adds settings)."""
    return RecallPolicy(**{f.name: getattr(view, f.name) for f in fields(RecallPolicy)})


@dataclass(frozen=True, slots=True)
class RecallPolicies:
    """The deployment's default policy and per-tenant overrides (whole policies)."""

    default: RecallPolicy = field(default_factory=RecallPolicy)
    tenants: Mapping[str, RecallPolicy] = field(default_factory=dict)

    def for_tenant(self, tenant: str | None) -> RecallPolicy:
        if tenant is None:
            return self.default
        return self.tenants.get(tenant, self.default)
