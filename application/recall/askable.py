"""Which open proposals the conversation plan puts to the subject as questions (`to_confirm`).

A question is only worth the subject's time when a yes would record what they said and still
hold. So an open proposal is left out of the plan (it stays pending, for reviewers) when:

- it is an inference (origin `inferred`): a conclusion the product or an agent drew (a risk,
  a sentiment, a score, an intent read between the lines), not something the subject said.
  Asking "are we right to think your churn risk is high?" exposes internal judgement, and no
  schema marking would catch every such field a deployment adds, so every inference goes to
  reviewers only;
- a later statement superseded it: the same field holds, or is proposed with, a different
  value said later (a newer pending proposal, or the confirmed profile entry), by the date of
  the evidence session (else the proposal's or the confirmation's own time). A list
  extension is superseded only by a later removal or replacement, not by another extension.

"Different" is by meaning (`memory.sameness`), so "12,000" does not supersede "12000".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from factledger.application.memory.sameness import same_value
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.domain.provenance import Operation


def askable(
    proposals: Sequence[OpenProposal],
    profile: Sequence[ProfileEntry],
    sessions: Mapping[str, SessionDigest],
) -> list[OpenProposal]:
    """The proposals to ask the subject about, in the order given."""

    def said(session_id: str | None, fallback: datetime) -> datetime:
        session = sessions.get(session_id or "")
        return fallback if session is None else session.started_at

    def superseded(proposal: OpenProposal) -> bool:
        when = said(proposal.evidence_session, proposal.proposed_at)
        for other in proposals:
            if other.change_id == proposal.change_id or other.field != proposal.field:
                continue
            if other.operation is Operation.APPEND:
                continue  # an extension adds to a list, it replaces nothing
            later = said(other.evidence_session, other.proposed_at) > when
            if later and not _same(other.value, proposal.value, proposal.operation):
                return True
        if proposal.operation is Operation.APPEND:
            return False  # the confirmed list may well hold other items
        for entry in profile:
            if entry.field != proposal.field:
                continue
            later = said(entry.evidence_session, entry.confirmed_at) > when
            if later and not _same(entry.value, proposal.value, proposal.operation):
                return True
        return False

    return [p for p in proposals if not p.inferred and not superseded(p)]


def _same(newer: str | None, older: str | None, operation: Operation) -> bool:
    if newer is None or older is None:
        return newer is None and older is None
    if operation is Operation.APPEND:
        return False  # a later set or removal of the whole list replaces the extension
    return same_value(newer, older)
