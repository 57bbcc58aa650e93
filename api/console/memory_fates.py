"""Why a memory of the backend is no longer served, as the ledger decided it, and when.

The sync carries the ledger's decisions to the backend: a forget (of the memory, or of a
field whose words it came from), a rejected proposal, an approved change replacing a value.
The backend keeps a fixed reason naming the ledger position that decided (`sync.apply`); the
ledger says what that was and when. A decision the sync has not carried yet is found the way
recall finds it (`recall.ledger_forget_source`): the page must not wait for the sync to stop
showing what the subject asked to forget.

A forgotten memory's words are never shown (`Fate.shows_text`); a rejected or replaced one's
are, since the ledger keeps the proposal's value readable to reviewers too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from factledger.application.ledger.core import SubjectAsRead
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.decisions import is_stale
from factledger.application.memory.types import Capability, MemoryFact
from factledger.application.recall.forget_filter import ForgetMask
from factledger.application.recall.ledger_forget_source import mask_of
from factledger.domain.events import ChangeConfirmed, ChangeRejected, FactForgotten
from factledger.domain.subject import Subject

# How the sync names the decision in the backend's forget reason (`sync.apply`).
_BACKEND_REASON = re.compile(r"in the ledger at position (\d+)$")
FORGOTTEN, REJECTED, REPLACED, EXPIRED = "forgotten", "rejected", "replaced", "expired"


@dataclass(frozen=True, slots=True)
class Fate:
    """Why a memory is not served: `kind` is forgotten, rejected, replaced or expired."""

    kind: str
    at: datetime | None
    reason: str
    pending: bool = False  # decided in the ledger; the sync has not carried it to the backend

    @property
    def shows_text(self) -> bool:
        return self.kind != FORGOTTEN


Decision = FactForgotten | ChangeRejected | ChangeConfirmed


@dataclass(frozen=True, slots=True)
class SubjectDecisions:
    """The subject's decisions that take memories out of what is served (read once a page)."""

    subject: Subject
    forgets: Sequence[FactForgotten]
    rejections: Sequence[ChangeRejected]  # in the order of `mask.rejections`
    by_position: dict[int, Decision]
    mask: ForgetMask

    def fate(self, fact: MemoryFact, capabilities: frozenset[Capability]) -> Fate | None:
        # A forget outranks whatever retired the memory before it: a memory an approval
        # replaced still holds the words of a field forgotten since, and must not show them.
        forgotten = self._forgotten_in_ledger(fact, capabilities, pending=not fact.is_forgotten)
        if forgotten is not None:
            return forgotten
        if fact.is_forgotten:
            return self._in_backend(fact)
        return self._rejected_in_ledger(fact, capabilities)

    def _in_backend(self, fact: MemoryFact) -> Fate:
        found = _BACKEND_REASON.search(fact.forget_reason or "")
        decision = None if found is None else self.by_position.get(int(found.group(1)))
        if decision is not None:
            return self._describe(decision, pending=False)
        if fact.forget_reason is None and fact.expires_at is not None:
            return Fate(EXPIRED, fact.expires_at, "its validity ended")
        # Forgotten in the backend by something other than our sync: no ledger record says why.
        return Fate(FORGOTTEN, None, "forgotten in the backend")

    def _forgotten_in_ledger(
        self, fact: MemoryFact, capabilities: frozenset[Capability], *, pending: bool
    ) -> Fate | None:
        """The ledger's forget of this memory (by id, or with a field), whether or not the
        backend has carried it; `pending` when the backend still serves the memory."""
        by_id = next((f for f in reversed(self.forgets) if f.memory_id == fact.id), None)
        if by_id is not None:
            return self._describe(by_id, pending=pending)
        mask, provenance = self.mask, Capability.FACT_PROVENANCE in capabilities
        if mask.forgets(fact, fact.id, provenance=provenance):
            for field in mask.fields:
                single = ForgetMask(fields=(field,), current_fields=mask.current_fields)
                with_field = self._field_forget(field.field)
                if with_field is not None and single.forgets(fact, fact.id, provenance=provenance):
                    return self._describe(with_field, pending=pending)
            return Fate(FORGOTTEN, None, "forgotten in the ledger", pending=pending)
        return None

    def _rejected_in_ledger(
        self, fact: MemoryFact, capabilities: frozenset[Capability]
    ) -> Fate | None:
        slots = Capability.FACT_SLOTS in capabilities
        for rejection, rule in zip(self.rejections, self.mask.rejections, strict=True):
            if fact.document_id in rule.documents and is_stale(fact, rule.decision, slots=slots):
                return self._describe(rejection, pending=True)
        return None

    def _field_forget(self, field: str) -> FactForgotten | None:
        return next((f for f in reversed(self.forgets) if f.field == field), None)

    def _describe(self, decision: Decision, *, pending: bool) -> Fate:
        at = decision.timestamp
        match decision:
            case FactForgotten(field=str(field)):
                return Fate(FORGOTTEN, at, f"field {field} forgotten: {decision.reason}", pending)
            case FactForgotten():
                return Fate(FORGOTTEN, at, f"forgotten: {decision.reason}", pending)
            case ChangeRejected():
                change = self.subject.changes.get(decision.change_id)
                of = "" if change is None else f" of {change.field}"
                return Fate(
                    REJECTED, at, f"a proposal{of} was rejected: {decision.reason}", pending
                )
            case ChangeConfirmed():
                return Fate(REPLACED, at, f"replaced by an approved change of {decision.field}")


def subject_decisions(
    ledger: Ledger, read: SubjectAsRead, positions: Sequence[int]
) -> SubjectDecisions:
    """The subject's decisions among the events it was rebuilt from, and those at
    `positions` (named by the backend's reasons) when they are this subject's: a position
    names any subject's event. Both read the ledger's history, on the page's server."""
    subject, events = read.subject, read.events
    forgets: list[FactForgotten] = []
    rejections: list[ChangeRejected] = []
    for event in events:
        if isinstance(event, FactForgotten):
            forgets.append(event)
        elif isinstance(event, ChangeRejected):
            rejections.append(event)
    by_position: dict[int, Decision] = {}
    for position in sorted(set(positions)):
        for notification in ledger.history_log.select_notifications(position, 1):
            if notification.id != position or notification.originator_id != subject.id:
                continue
            event = ledger.mapper.to_domain_event(notification)
            if isinstance(event, FactForgotten | ChangeRejected | ChangeConfirmed):
                by_position[position] = event
    # One rejection after another, as recall applies them: the mask keeps their order.
    rejections = [r for r in rejections if r.change_id in subject.changes]
    rejected_at = {r.change_id: r.originator_version for r in rejections}
    rejections.sort(key=lambda r: r.originator_version)
    mask = mask_of(subject, rejected_at)
    return SubjectDecisions(subject, forgets, rejections, by_position, mask)


def positions_named(facts: Sequence[MemoryFact]) -> list[int]:
    """The ledger positions the backend's forget reasons name."""
    found = (_BACKEND_REASON.search(f.forget_reason or "") for f in facts if f.is_forgotten)
    return [int(m.group(1)) for m in found if m is not None]
