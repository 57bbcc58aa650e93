"""Memory switched off: which subjects' data the sync may write to the memory backend.

Recall's policy carries the on/off switch (`RecallPolicy.enabled`, per deployment and per
tenant). Off means more than "recall answers nothing": the sync must not send that tenant's
sessions, proposals or profiles to the backend either, while the ledger keeps recording them.
Forget items still pass: they only remove what an earlier, enabled period wrote, and a
forgotten fact must not outlive the switch being turned on again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from factledger.application.recall.policy import RecallPolicies
from factledger.application.sync.ports import SubjectTenants
from factledger.application.sync.types import SyncKind

# Items that only remove data from the backend: applied even where memory is off.
REMOVALS = frozenset(
    {SyncKind.FORGET, SyncKind.ERASE, SyncKind.EXPIRE, SyncKind.REJECT, SyncKind.RETIRE}
)
# Items that write to the ledger, not the backend: proposals have their own switch.
LEDGER_STEPS = frozenset({SyncKind.PROPOSE})


@dataclass(frozen=True, slots=True)
class MemorySwitch:
    """Decides, per item, whether memory is on for its subject's tenant."""

    policies: RecallPolicies
    tenants: SubjectTenants
    _uniform: bool | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # One answer for every tenant spares the worker a tenant lookup per item.
        states = {self.policies.default.enabled} | {
            p.enabled for p in self.policies.tenants.values()
        }
        object.__setattr__(self, "_uniform", states.pop() if len(states) == 1 else None)

    async def allows(self, subject_id: UUID, kind: SyncKind) -> bool:
        if kind in REMOVALS or kind in LEDGER_STEPS:
            return True
        if self._uniform is not None:
            return self._uniform
        tenant = await self.tenants.tenant_of(subject_id)
        return self.policies.for_tenant(tenant).enabled
