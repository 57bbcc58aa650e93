"""Reviewers' decisions reach the backend: recall believes what was decided.

Recall serves the backend's current memories; a reviewer's decision in the ledger changes what
is current, so the sync carries two decisions to the backend:

- a rejected proposal (`ChangeRejected`): the memories that state the rejected value leave
  recall, and so does the proposal's own record. A memory goes when it states the value (by
  meaning: `memory.sameness`) and is about the field (its slot, on a backend that fills
  slots). A memory without a slot goes only when it comes from the proposal's evidence session
  (a rejected name must not take "works with <the same word>" from another conversation). A
  memory of the field's slot made from the proposal's evidence line goes too, whatever its
  words: the extractor rewrites a line ("Our lease ends in August" is remembered as "their
  lease ends in August"), so the value's words are not always the memory's;
- an approved change of a single-valued field (`ChangeConfirmed` of a `set` or `unset`): the
  values it replaced (the profile's previous value and those of every other proposal of the
  field) stop being current, so their memories leave recall; on a backend that fills slots,
  so does every current memory of the field's slot that does not state the approved value
  (an older supplier the extractor did not link as replaced). A memory that states the
  approved value stays, even when it names the old one too ("moved from A to B").

A memory whose slot is about another field is left to that field's decisions, except when
its whole text is the decided value: an inference is proposed with its own words as the
value ("price is an important factor for them" in `insights`) while the extractor slots it
under a name of its own (`insight:price_sensitivity`).
  Appending to a list replaces nothing.

No backend behind the port can mark a memory superseded after the fact (Supermemory's API has
no such call), so these memories are forgotten in the backend with a reason that names the
decision's position and carries no content; the ledger keeps every value and its history.

Pure selection over memories listed before the write: already-forgotten memories are not
listed, so a retried item selects nothing new.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from factledger.application.memory.forget_selection import slot_field
from factledger.application.memory.sameness import any_states, same_value
from factledger.application.memory.types import MemoryFact


@dataclass(frozen=True, slots=True)
class Decided:
    """What one decision made stale, as the selection needs it.

    - `stale`: the wordings of the values that are no longer current;
    - `kept`: the wordings that are current for the field (a memory stating one stays);
    - `whole_slot`: the field holds one value, so every current memory of its slot that does
      not state a kept wording is stale too;
    - `evidence_document`: where a memory without a slot must come from to go (None: from
      anywhere);
    - `evidence_lines`: the message indexes of `evidence_document` that said the stale value
      (a rejected proposal's evidence): a memory of the field's slot made from one of them is
      stale whatever its words.
    """

    field: str
    stale: tuple[str, ...]
    kept: tuple[str, ...] = ()
    whole_slot: bool = False
    evidence_document: str | None = None
    evidence_lines: frozenset[int] = frozenset()


def decided(
    field: str,
    stale: Iterable[str],
    kept: Iterable[str] = (),
    *,
    whole_slot: bool = False,
    evidence_document: str | None = None,
    evidence_lines: Iterable[int] = (),
) -> Decided:
    """A `Decided` whose stale wordings exclude those that say a kept value."""
    current = tuple(dict.fromkeys(kept))
    gone = tuple(dict.fromkeys(s for s in stale if not any(same_value(s, k) for k in current)))
    lines = frozenset(evidence_lines)
    return Decided(field, gone, current, whole_slot, evidence_document, lines)


class Sourced(Protocol):
    """Where a memory was made from: its transcript document and message indexes."""

    @property
    def document_id(self) -> str | None: ...

    @property
    def source_indexes(self) -> tuple[int, ...]: ...


class Stated(Sourced, Protocol):
    """What the rule reads of a memory (a `MemoryFact`, or recall's view of a search hit)."""

    @property
    def text(self) -> str: ...

    @property
    def slot(self) -> str | None: ...


def is_stale(memory: Stated, decision: Decided, *, slots: bool) -> bool:
    """Whether the decision makes this current memory stale (see the module docstring);
    `slots`: whether the backend fills memory slots (`Capability.FACT_SLOTS`)."""
    about = slot_field(memory.slot)
    if slots and about is not None and about != decision.field:
        # About another field: that field's decisions speak for it, unless the memory is
        # nothing but the decided value (an inference whose words are the proposed value,
        # slotted by the extractor under a name of its own).
        return is_the_value(memory.text, decision)
    if any_states(memory.text, decision.kept):
        return False
    if slots and about == decision.field and said_in_evidence(memory, decision):
        return True
    if any_states(memory.text, decision.stale):
        unplaced = memory.slot is None and decision.evidence_document is not None
        return not (unplaced and memory.document_id != decision.evidence_document)
    return decision.whole_slot and slots and about == decision.field


def said_in_evidence(memory: Sourced, decision: Decided) -> bool:
    """Whether the memory was made from a line the decision's stale value was said in."""
    return (
        decision.evidence_document is not None
        and memory.document_id == decision.evidence_document
        and not decision.evidence_lines.isdisjoint(memory.source_indexes)
    )


def is_the_value(text: str, decision: Decided) -> bool:
    """Whether a memory's whole text is one of the decision's stale wordings."""
    if any_states(text, decision.kept):
        return False
    return any(same_value(text, wording) for wording in decision.stale)


def stale_memories(memories: Sequence[MemoryFact], decision: Decided, *, slots: bool) -> list[str]:
    """The ids of the current memories the decision makes stale (`is_stale`)."""
    return [
        m.id
        for m in memories
        if m.is_latest and not m.is_forgotten and is_stale(m, decision, slots=slots)
    ]
