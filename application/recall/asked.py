"""The values of the field a turn's question asks about, before the transcript's memories.

Recall believes what was decided: a confirmed profile fact comes before an unreviewed
transcript memory when both answer the question. The question heads (per subject kind, over
the embedder the backend already runs; `RecallPorts.asked_fields`) read which profile field
a question asks about. The field's confirmed value comes first (`recall.decided`); then its
newest pending change that still holds, as a proposal note marked unconfirmed: nobody has
decided it, so it is never a fact, but it is what the subject said about the field, which
the search's threshold often leaves out; then the memories.

Which field: the one the heads are sure the question asks about, held or not (a question
about a field with no value, forgotten or never said, gets no other field's value); when
they are sure of none, the most probable field the subject holds a value of, however unsure
(ADR 0123): the note is marked unconfirmed and named by its field.

A pending value still holds (ADR 0123) when:

- `askable`: the subject said it, and no later statement or confirmed value of the field
  differs from it (a later request to forget the field differs from every value);
- its words were not also read as another field's value that a later statement replaced
  (one sentence, "firmware 2.4.0", read as two fields: once one reading is outdated, so is
  the other);
- no later pending removal takes it off (a list's extension offers the items no removal said
  after it names; a removal is never offered as a value, ADR 0159);
- no memory the turn found, said after the value was proposed, answers the question without
  stating it: the newest answer to the question is not the pending value's, so the pending
  value is not offered as current (the memory is).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime
from uuid import UUID

from factledger.application.memory.sameness import same_value, states
from factledger.application.memory.types import SearchHit
from factledger.application.recall.askable import askable
from factledger.application.recall.notes import proposal_text
from factledger.application.recall.replaced import ReplacedStatement
from factledger.application.recall.sources import OpenProposal, ProfileEntry
from factledger.application.recall.types import Note, NoteKind, NoteOrigin
from factledger.domain.proposal import item_key
from factledger.domain.provenance import Operation
from factledger.domain.values import ListValue, render

# The newest only: an older pending value of the field is what a later statement changed
# (on the blind dev halves a second one added stale values and no right note).
ASKED_PENDING = 1
# How many of the question heads' most probable fields may fill a turn's empty places.
OTHER_FIELDS = 5
# How many of the turn's best memories may show a later answer to the question.
LATER_ANSWERS = 1


def held_fields(proposals: Sequence[OpenProposal], profile: Sequence[ProfileEntry]) -> set[str]:
    """The fields the subject holds a value of: confirmed, or pending (a value, not a
    request to forget)."""
    return {p.field for p in proposals if p.value is not None} | {e.field for e in profile}


def offered_pending(
    field: str,
    proposals: Sequence[OpenProposal],
    profile: Sequence[ProfileEntry],
    replaced: Sequence[ReplacedStatement] = (),
    hits: Sequence[SearchHit] = (),
    withheld: Collection[UUID] = (),
) -> tuple[OpenProposal, ...]:
    """The field's newest pending changes still worth offering (each as `note_of`).
    `replaced`: the statements recall withholds (`recall.replaced`); `hits`: the turn's
    memories, best first; `withheld`: changes a pending request to forget speaks of
    (`recall.requested`)."""
    of_field = _after_removals([p for p in proposals if p.field == field])
    if not of_field:
        return ()
    confirmed = [e.value for e in profile if e.field == field]
    held = [
        p
        for p in askable(of_field, profile, {})
        if p.value is not None
        and p.change_id not in withheld
        and not any(same_value(v, p.value) for v in confirmed)
        and not _read_elsewhere(p, p.value, replaced)
        and not _answered_later(p, p.value, hits)
    ]
    held.sort(key=lambda p: p.proposed_at, reverse=True)
    return tuple(held[:ASKED_PENDING])


def _after_removals(proposals: Sequence[OpenProposal]) -> list[OpenProposal]:
    """The field's pending changes as values still worth offering: a removal is no value (it
    is left out), and an extension offers only the items no removal said after it takes off
    (ADR 0159); an extension left with none is left out."""
    removals = [p for p in proposals if p.operation is Operation.REMOVE]
    kept = []
    for p in proposals:
        if p.operation is Operation.REMOVE:
            continue
        if p.operation is Operation.APPEND and isinstance(p.typed, ListValue) and removals:
            gone = {
                item_key(i)
                for r in removals
                if _said(r) > _said(p) and isinstance(r.typed, ListValue)
                for i in r.typed.items
            }
            items = tuple(i for i in p.typed.items if item_key(i) not in gone)
            if not items:
                continue
            if len(items) < len(p.typed.items):
                rest = ListValue(items)
                p = replace(p, value=render(rest), typed=rest)
        kept.append(p)
    return kept


def _said(proposal: OpenProposal) -> datetime:
    return proposal.said_at or proposal.proposed_at


def other_pending(
    ranked: Sequence[str],
    asked: str | None,
    proposals: Sequence[OpenProposal],
    profile: Sequence[ProfileEntry],
    replaced: Sequence[ReplacedStatement] = (),
    hits: Sequence[SearchHit] = (),
    withheld: Collection[UUID] = (),
) -> tuple[Note, ...]:
    """The newest pending value still worth offering of each field other than the asked
    one, in `ranked` order (the question heads' most probable first): what fills the places
    a turn's notes leave empty (ADR 0132)."""
    pending = {p.field for p in proposals if p.value is not None}
    return tuple(
        note_of(change)
        for name in ranked[:OTHER_FIELDS]
        if name != asked and name in pending
        for change in offered_pending(name, proposals, profile, replaced, hits, withheld)
    )


def _read_elsewhere(
    proposal: OpenProposal, value: str, replaced: Sequence[ReplacedStatement]
) -> bool:
    """Whether the value's words, said in its session, are another field's replaced value."""
    return any(
        r.current  # replaced by a later statement, not withheld for a request to forget
        and r.field != proposal.field
        and r.session_id == proposal.evidence_session
        and any(same_value(v, value) for v in r.value)
        for r in replaced
    )


def _answered_later(proposal: OpenProposal, value: str, hits: Sequence[SearchHit]) -> bool:
    return any(
        h.is_latest
        and h.occurred_at is not None
        and h.occurred_at > proposal.proposed_at
        and not states(h.text, value)
        for h in hits[:LATER_ANSWERS]
    )


def note_of(proposal: OpenProposal) -> Note:
    """A pending change as an unconfirmed note, named by its field."""
    return Note(
        text=proposal_text(proposal),
        origin=NoteOrigin(
            NoteKind.PROPOSAL,
            str(proposal.change_id),
            proposal.evidence_session,
            inferred=proposal.inferred,
        ),
        on=proposal.proposed_at.date(),
    )
