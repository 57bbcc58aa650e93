"""Confirmed facts first: per-turn recall ranks what a reviewer decided before what a
transcript merely says.

Among the memories the search found for a turn, those that state a confirmed field's value
agree with what was decided: they come first, in their order, keeping their own wording and
history ("works with B, previously A"). A confirmed field the turn asks about (its question
names the field or its value, or the question heads read it as asking about the field) that
no found memory states comes first as a profile note, so an unreviewed memory answering the
same question never ranks above it. The other memories follow, up to the policy's limit.
Values are compared by meaning (`memory.sameness`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factledger.application.memory.sameness import states
from factledger.application.memory.types import SearchHit
from factledger.application.recall.sources import ProfileEntry
from factledger.domain.values import field_words


@dataclass(frozen=True, slots=True)
class Ranked:
    """The confirmed fields to show as profile notes (first), then the memories in order."""

    confirmed: tuple[ProfileEntry, ...]
    hits: tuple[SearchHit, ...]


def _asked(entry: ProfileEntry, query: str, field: str | None) -> bool:
    return (
        entry.field == field
        or states(query, field_words(entry.field))
        or states(query, entry.value)
    )


def decided_first(
    profile: Sequence[ProfileEntry],
    query: str,
    hits: Sequence[SearchHit],
    asked_field: str | None = None,
) -> Ranked:
    """The turn's notes in order: agreeing memories, then confirmed fields asked about that
    no memory states, first; then every other memory. `asked_field`: the field the question
    heads read the query as asking about (`recall.asked`), if any."""
    agreeing = [h for h in hits if any(states(h.text, e.value) for e in profile)]
    unstated = tuple(
        e
        for e in profile
        if _asked(e, query, asked_field) and not any(states(h.text, e.value) for h in agreeing)
    )
    rest = [h for h in hits if h not in agreeing]
    return Ranked(unstated, (*agreeing, *rest))
