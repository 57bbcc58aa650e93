"""Recall policy: budgets, search defaults and the on/off switch, per deployment and tenant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from factledger.application.memory.types import SearchMode


@dataclass(frozen=True, slots=True)
class RecallPolicy:
    """How recall behaves for one tenant; the defaults are the product's promise.

    - `context_budget_s` bounds `session_context`, `recall_budget_s` bounds `recall`.
    - Search defaults: memories only, threshold 0.55, at most 3 facts, inferred and
      superseded facts excluded.
    """

    enabled: bool = True
    context_budget_s: float = 2.0
    recall_budget_s: float = 1.0
    mode: SearchMode = SearchMode.MEMORIES
    threshold: float = 0.55
    limit: int = 3
    include_inferred: bool = False
    include_superseded: bool = False
    recent_sessions: int = 3
    max_proposals: int = 5
    excerpts: bool = True
    excerpt_chars: int = 280


@dataclass(frozen=True, slots=True)
class RecallPolicies:
    """The deployment's default policy and per-tenant overrides (whole policies)."""

    default: RecallPolicy = field(default_factory=RecallPolicy)
    tenants: Mapping[str, RecallPolicy] = field(default_factory=dict)

    def for_tenant(self, tenant: str | None) -> RecallPolicy:
        if tenant is None:
            return self.default
        return self.tenants.get(tenant, self.default)
