"""Rows under the search's threshold fill the places a turn leaves empty.

"How is she paying?" The subject said "put it on debit order from their Capitec account",
whose memory the calibrated search scores 0.52 for the question, under the threshold of 0.55:
the turn served no note at all, while the answer was the best row the search had. On the dev
halves no shipped model was trained on, a third of the questions recall loses have their
answer in such a row, and most of those turns serve fewer notes than the policy's limit (ADR
0150): the top 3 is short, not wrong.

A turn's memories-mode search already returns a few rows under the threshold (`recall.later`).
When the notes (the memories over the threshold, the confirmed fields, the asked field's
pending value and the other held fields' pending values in empty places) leave places, the
rows under the threshold at or above the policy's floor (`RecallPolicy.under_floor`) take
them, best first:

- they pass what the turn's memories pass: the forget mask, which the caller applies (a row
  is read against it only when a place may be left), and the turn's withholding by the
  ledger's decisions (`recall.outdated`'s newer pending value, `recall.later`'s later
  statement and the memories said before it);
- a superseded row stays out, as a superseded memory does by default, and a row already
  offered is not offered twice;
- each is a memory note with its calibrated score, which is under the threshold: an agent
  can tell how sure recall is;
- nothing here reads words: the floor is on the calibrated relevance the search already
  gave, and what is withheld is what the ledger decided.

Off by default (`under_floor` None): at a floor of 0.1 the rows gained right notes on every
dev half that moved, but also named old values more often than the adoption rule allowed
(rows under the threshold are often the note that says a value changed, or an earlier
statement no decision retired), so it stays a deployment's choice and the lab's (ADR 0150).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from factledger.application.memory.types import SearchHit
from factledger.application.recall.later import from_later
from factledger.application.recall.outdated import not_outdated
from factledger.application.recall.sources import OpenProposal


def candidate_rows(under: Sequence[SearchHit], floor: float | None) -> list[SearchHit]:
    """The rows under the threshold that may fill a place: current, at or above `floor`, best
    first (None: the policy fills no place with them)."""
    if floor is None:
        return []
    return [h for h in under if h.is_latest and h.score >= floor]


def filling_rows(
    rows: Sequence[SearchHit],
    *,
    offered: Sequence[OpenProposal],
    later: SearchHit | None,
    shown: Collection[str],
    places: int,
) -> list[SearchHit]:
    """At most `places` of `rows` (past the forget mask), less what the turn withholds and
    what it already offers (ids in `shown`), best first."""
    if places <= 0 or not rows:
        return []
    if later is None:
        kept = not_outdated(rows, offered)
    else:
        kept = [h for h in from_later(rows, later) if h.id != later.id]
    return [h for h in kept if h.id not in shown][:places]
