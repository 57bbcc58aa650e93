"""The values of the field a turn's question asks about, before the transcript's memories.

Recall believes what was decided: a confirmed profile fact comes before an unreviewed
transcript memory when both answer the question. The question heads (per subject kind, over
the embedder the backend already runs; `RecallPorts.asked_fields`) read which profile field
a question asks about. The field's confirmed value comes first (`recall.decided`); then its
newest pending change that still holds (`askable`: said by the subject, not superseded by a
later statement or a later confirmed value), as a proposal note marked unconfirmed: nobody
has decided it, so it is never a fact, but it is what the subject said about the field, which
the search's threshold often leaves out; then the memories.
"""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.memory.sameness import same_value
from factledger.application.recall.askable import askable
from factledger.application.recall.notes import proposal_text
from factledger.application.recall.sources import OpenProposal, ProfileEntry
from factledger.application.recall.types import Note, NoteKind, NoteOrigin

# The newest only: an older pending value of the field is what a later statement changed
# (on the blind dev halves a second one added stale values and no right note).
ASKED_PENDING = 1


def asked_pending(
    field: str, proposals: Sequence[OpenProposal], profile: Sequence[ProfileEntry]
) -> tuple[Note, ...]:
    """The field's newest pending changes still worth offering, as unconfirmed notes."""
    of_field = [p for p in proposals if p.field == field]
    if not of_field:
        return ()
    confirmed = [e.value for e in profile if e.field == field]
    held = [
        p
        for p in askable(of_field, profile, {})
        if p.value is not None and not any(same_value(v, p.value) for v in confirmed)
    ]
    held.sort(key=lambda p: p.proposed_at, reverse=True)
    return tuple(_note(p) for p in held[:ASKED_PENDING])


def _note(proposal: OpenProposal) -> Note:
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
