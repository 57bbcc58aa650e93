"""Memories the asked field's newer pending value outdated: recall offers the newest answer.

"Which pharmacy does Dolores use now?" The question heads read `preferred_pharmacy`; the
subject said "Greenleaf Pharmacy on Dock Street" in their second session, and recall offers
it as the field's pending value (`recall.asked`). The first session's "The CVS on Elm Street,
by the library" was never proposed for the field (or its memory is not recognised as the
proposal's sentence, `recall.replaced`), so it stayed a current memory and came right after
the newer value, answering the same question with what no longer holds.

The converse of ADR 0123's later answer (a memory said after the pending value that answers
the question without stating it means the pending value is not offered): when the asked
field's newest pending value is offered, a memory of an earlier session that does not state
it is what that value outdated for this question, and is not offered beside it.

- Only for a single-valued field (a `set`): an earlier memory of a list field may hold
  another of its items.
- Only memories of an earlier session, by the sessions' dates: a memory said with the value,
  or after it, is not outdated by it.
- A memory that states the value stays ("moved from CVS to Greenleaf").
- Withheld for this turn only, by what this turn offers: a question about something else
  gets the same memory as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.memory.sameness import states
from factledger.application.memory.types import SearchHit
from factledger.application.recall.sources import OpenProposal
from factledger.domain.provenance import Operation


def not_outdated(hits: Sequence[SearchHit], offered: Sequence[OpenProposal]) -> list[SearchHit]:
    """`hits` less the memories an offered pending value outdated (module docstring)."""
    newer = [
        p
        for p in offered
        if p.operation is Operation.SET and p.value is not None and p.said_at is not None
    ]
    if not newer:
        return list(hits)
    return [h for h in hits if not any(_outdates(p, h) for p in newer)]


def _outdates(proposal: OpenProposal, hit: SearchHit) -> bool:
    said, value = proposal.said_at, proposal.value
    if said is None or value is None or hit.occurred_at is None:
        return False
    return hit.occurred_at < said and not states(hit.text, value)
