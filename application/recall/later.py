"""A later statement of the asked field under the search's threshold: the newest answer.

"Which plan is Bramblegate on these days?" The question heads read `plan`; the subject said
"we're on Team" in the first session, and recall offers it as the field's pending value
(`recall.asked`). In the second session they said "upgraded to Business last week", which
no proposal tied to the field, and whose memory scores under the search's threshold for the
question: recall never saw it, so the earlier value stood as current.

A turn's search also returns a few rows under the threshold (`UNDER_ROWS`), never offered as
such. When recall would offer the asked field's pending value, the best of those rows said
after that value (`CANDIDATES`) are read by the same question heads that read the question,
over the embedder's vectors of their texts (the embedder keeps the vectors of texts it met
recently, so a memory synced by this process is not run again). A row whose two most
probable fields hold the asked one is the newest statement of the field: it takes the
pending value's place, and the turn's memories of sessions before it are not offered beside
it (ADR 0142's rule 2, from the later statement's date).

- Read by meaning, not by words: a later memory that repeats the value ("still Kraków") takes
  the place too, which says the same.
- Only when a pending value of the asked field is offered: the pending value is what the
  later statement may have outdated; a turn without one pays nothing.
- Only for a field the heads are sure the question asks about (not the most probable held
  field taken when they are sure of none), and only a single-valued one (a `set`): a later
  statement of a list field may add an item rather than change the earlier one.
- Withheld for this turn only: the pending value stays in the review queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from factledger.application.memory.types import SearchHit
from factledger.application.recall.ports import AskedFields
from factledger.application.recall.sources import OpenProposal
from factledger.domain.provenance import Operation

# Rows under the threshold a turn's search also returns, to look for a later statement in.
UNDER_ROWS = 6
# How many of those, said after the pending value, best first, the heads read.
CANDIDATES = 3
# A row is the asked field's statement when the field is among its most probable this many:
# the heads, fitted on questions, often rank a neighbour first for a statement ("flu is gone
# but now sinus pain" read as allergies, then the chief complaint), and the second place
# found more later statements without taking a right value's place (ADR 0147).
FIELD_RANKS = 2


def split_under(
    hits: Sequence[SearchHit], threshold: float, limit: int
) -> tuple[list[SearchHit], list[SearchHit]]:
    """The hits a search at `threshold` with `limit` rows returns (the same rows, in the same
    order, since scores never rise down the list), and the rows under the threshold."""
    above = [h for h in hits if h.score >= threshold][:limit]
    return above, [h for h in hits if h.score < threshold]


def said_at(offered: Sequence[OpenProposal]) -> datetime | None:
    """When the offered pending value of a single-valued field was said (None: nothing
    offered, a list field's item, which a later statement may add to rather than change, or
    not known)."""
    times = [
        p.said_at
        for p in offered
        if p.operation is Operation.SET and p.said_at is not None and p.value is not None
    ]
    return max(times) if times else None


async def later_statement(
    reader: AskedFields,
    kind: str,
    asked: str,
    since: datetime,
    under: Sequence[SearchHit],
) -> SearchHit | None:
    """The best of the rows under the threshold said after `since` whose most probable fields,
    by the question heads, hold `asked` (module docstring)."""
    later = [
        h for h in under if h.is_latest and h.occurred_at is not None and h.occurred_at > since
    ][:CANDIDATES]
    if not later:
        return None
    vectors = await asyncio.gather(*(reader.query_vector(h.text) for h in later))
    for hit, vector in zip(later, vectors, strict=True):
        ranked = () if vector is None else reader.ranked_fields(kind, vector)
        if asked in ranked[:FIELD_RANKS]:
            return hit
    return None


def from_later(hits: Sequence[SearchHit], later: SearchHit) -> list[SearchHit]:
    """The later statement first, then the turn's memories not said before it."""
    at = later.occurred_at
    rest = [
        h
        for h in hits
        if h.id != later.id
        and not (at is not None and h.occurred_at is not None and h.occurred_at < at)
    ]
    return [later, *rest]
