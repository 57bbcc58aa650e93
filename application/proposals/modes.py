"""Whether the product proposes for a tenant and subject kind: `propose` (default) or `off`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class ProposalMode(StrEnum):
    PROPOSE = "propose"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class ProposalModes:
    """The deployment's mode, then per tenant (`kinds` override by subject kind)."""

    default: ProposalMode = ProposalMode.PROPOSE
    tenants: Mapping[str, ProposalMode] = field(default_factory=dict)
    kinds: Mapping[tuple[str, str], ProposalMode] = field(default_factory=dict)

    def proposes(self, tenant: str, kind: str) -> bool:
        mode = self.kinds.get((tenant, kind), self.tenants.get(tenant, self.default))
        return mode is ProposalMode.PROPOSE
