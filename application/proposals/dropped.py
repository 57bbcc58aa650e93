"""Items of a list field the subject says no longer hold, as removal candidates (ADR 0159).

A list field could only grow: "the cardiologist stopped the aspirin" proposed nothing, and
the pending list kept offering the aspirin. A `DroppedItemsReader` (a learned reader: which
items it drops is a judgement of meaning, in any language) reads each subject sentence of a
session against the items the subject holds of each list field (confirmed, or said in a
standing extension), and says which of them the sentence drops. Each field's dropped items
become one removal candidate quoting the sentence that dropped the last of them; `plan`
weighs it against the subject.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from factledger.application.proposals.candidates import Candidate
from factledger.application.proposals.schema import KindFeeds
from factledger.application.sentences import sentences
from factledger.domain.proposal import item_key
from factledger.domain.provenance import (
    MAX_QUOTE,
    STANDING,
    ChangeStatus,
    Evidence,
    Operation,
    Origin,
)
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message, Role
from factledger.domain.values import ListValue


@dataclass(frozen=True, slots=True)
class HeldList:
    """The items the subject holds of one list field."""

    field: str
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DroppedItem:
    """`item` of `field`, which sentence `sentence` (an index into the sentences read) drops."""

    field: str
    item: str
    sentence: int


class DroppedItemsReader(Protocol):
    async def dropped(
        self, lists: Sequence[HeldList], sentences: Sequence[str]
    ) -> list[DroppedItem]:
        """The held items each sentence says no longer hold for the subject (not for someone
        else, not maybe, not for a while): none for a sentence that drops none."""
        ...


def held_lists(subject: Subject, feeds: KindFeeds) -> list[HeldList]:
    """Each list field's items the subject holds: the profile's, then those of its standing
    extensions, less those a standing removal already takes off; each once, as first said."""
    lists: list[HeldList] = []
    for feed in feeds.fields:
        if not feed.many:
            continue
        current = subject.fields.get(feed.field)
        items = (
            list(current.value.items) if current and isinstance(current.value, ListValue) else []
        )
        removed: set[str] = set()
        for record in subject.changes.values():
            value = record.proposal.value
            if record.field != feed.field or record.status not in STANDING:
                continue
            if not isinstance(value, ListValue):
                continue
            if record.operation is Operation.APPEND:
                items += value.items
            elif record.operation is Operation.REMOVE and record.status is ChangeStatus.PENDING:
                removed |= {item_key(i) for i in value.items}
        seen: set[str] = set()
        kept = []
        for item in items:
            key = item_key(item)
            if key not in seen and key not in removed:
                seen.add(key)
                kept.append(item)
        if kept:
            lists.append(HeldList(feed.field, tuple(kept)))
    return lists


async def removal_candidates(
    transcript: Sequence[Message],
    lists: Sequence[HeldList],
    reader: DroppedItemsReader,
    feeds: KindFeeds,
    session_id: str,
) -> list[Candidate]:
    """One removal candidate per list field some subject sentence of the session drops items
    of: the items, quoting the (last) sentence that dropped one."""
    if not lists:
        return []
    said: list[tuple[int, str]] = [
        (index, sentence)
        for index, message in enumerate(transcript)
        if message.role is Role.SUBJECT
        for sentence in sentences(message.text)
    ]
    if not said:
        return []
    found = await reader.dropped(lists, [s for _, s in said])
    by_field: dict[str, list[DroppedItem]] = {}
    for drop in found:
        by_field.setdefault(drop.field, []).append(drop)
    candidates = []
    for feed in feeds.fields:
        drops = by_field.get(feed.field)
        if not drops or not feed.many:
            continue
        last = max(drops, key=lambda d: d.sentence)
        index, sentence = said[last.sentence]
        items = tuple(dict.fromkeys(d.item for d in drops))
        candidates.append(
            Candidate(
                feed,
                items,
                Origin.STATED,
                Evidence(session_id, index, sentence[:MAX_QUOTE]),
                None,
                (),
                said_in=(session_id, index),
                removes=True,
            )
        )
    return candidates
