"""Confirmed facts first: per-turn recall ranks what a reviewer decided before what a
transcript says.

A confirmed profile field answers a turn's question when the question names the field or its
value, or when a memory the search found for it states the field's value (the memory was found
for the question, so the field it restates answers it as well). Such fields come first, as
profile notes, and the memories that only restate their values are left out (the confirmed
note says it, dated by its evidence); the other memories follow, up to the policy's limit.
Values are compared by meaning (`memory.sameness`), not by characters.
"""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.memory.sameness import states
from factledger.application.memory.types import SearchHit
from factledger.application.recall.sources import ProfileEntry
from factledger.domain.values import field_words


def answering(
    profile: Sequence[ProfileEntry], query: str, hits: Sequence[SearchHit]
) -> list[ProfileEntry]:
    """The confirmed fields that answer `query`, in profile order."""
    return [
        entry
        for entry in profile
        if states(query, field_words(entry.field))
        or states(query, entry.value)
        or any(states(hit.text, entry.value) for hit in hits)
    ]


def not_restating(hits: Sequence[SearchHit], entries: Sequence[ProfileEntry]) -> list[SearchHit]:
    """`hits` without those that state the value of one of `entries`."""
    return [h for h in hits if not any(states(h.text, e.value) for e in entries)]
