"""What a pending request to forget speaks of: recall withholds it until the request is decided.

"Can you delete where I'm living now from your notes?" The judgement notices the request and
the proposer places it on a field; when it places it on another field, or the memory of
what was said ("is living with their parents right now in Kenwick") was never the evidence
of any proposal, the field's rules (`recall.replaced`, `recall.forget_filter`) reach nothing,
and recall went on offering what the subject asked to have removed. The ledger still holds
the request's own sentence. So, while a request to forget is pending, recall withholds the
memories said before it that share a keyword with that sentence: the words of the request
that name its topic ("living", "parents", "reg", "husband") are what the earlier statement
said. Keywords are memories-mode search's own (`memory.lexical.keywords`: the words less the
`stopwords` library's function words, each folded to its lemma), so "lives" and "living"
meet, and "the", "my" never do.

- Only memories of what the subject said before the request: earlier sessions, and earlier
  messages of the request's own session ("Rite Aid on Franklin. ... can we just not put a
  pharmacy?" said in one message is the request's own message: it stays, as the statement
  said with the request may be what it keeps).
- Nor as history: a superseded memory the request speaks of is never a current note's
  "previously ...", and a note said with or after the request whose "previously" part shares
  a keyword with it is withheld ("I've dropped private cover, NHS only now. Remove Orchard
  Health from my file" leaves "NHS only now, previously Orchard Health" out, while the new
  value's own memory stays).
- Withheld, not forgotten: rejecting the request brings the memories back; approving it
  forgets the field by the sync's own rule, as before. Read from the ledger on every recall
  with the rest of the mask (kept per subject version), so it costs no backend call.

A request to forget what was said (ADR 0174) names the lines it concerns: while it is pending,
the memories drawn from those lines are withheld too, whatever their words.

The same words reach the ledger's own pending values (ADR 0142): a pending change said before
the request whose value (or condition) shares a keyword with the request's sentence is not
offered either, as the asked field's value or in a turn's empty places (`recall.asked`). The
proposer may have placed the request on another field ("please don't keep why I don't want
east-facing" placed on `preferred_area`) while the value that holds what the subject asked
to have removed ("must haves: no east-facing units, I work nights") stayed a pending value
recall offered. The change stays pending for reviewers; only recall stops offering it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from uuid import UUID

from factledger.application.memory.decisions import Sourced
from factledger.application.memory.lexical import keywords
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.types import SearchHit
from factledger.application.memory.value_repeats import PREVIOUSLY
from factledger.domain.proposal import ChangeRecord, Proposal
from factledger.domain.provenance import (
    REQUESTS_TO_FORGET,
    STATES_VALUE,
    ChangeStatus,
    Operation,
)
from factledger.domain.said_lines import parse_line_refs
from factledger.domain.subject import Subject
from factledger.domain.values import ListValue, render


class Said(Sourced, Protocol):
    """What a request is matched against: a search hit, or a memory read by id."""

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SpokenRequest:
    """A pending request to forget, as recall recognises the memories it speaks of."""

    earlier: frozenset[str]  # transcript documents of the sessions said before the request's
    document_id: str  # the request's session's transcript document
    message_index: int
    words: frozenset[str]  # the request sentence's keywords
    said_at: tuple[datetime, int]  # its session's start, then its message
    # The lines a request to forget what was said names (ADR 0174), by transcript document.
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def withholds(self, hit: SearchHit) -> bool:
        """Whether recall withholds a hit: a memory the request speaks of (current, or
        superseded and so shown only as history), or one whose "previously" part names
        what it speaks of (said with the request: "NHS only now, previously Orchard Health")."""
        return self.concerns(hit) or self._named_as_previous(hit.text)

    def concerns(self, memory: Said) -> bool:
        """Whether the request speaks of a memory: said before it, and drawn from a line it
        names or sharing a keyword with its sentence."""
        if not self._said_before(memory):
            return False
        named = self.lines.get(memory.document_id or "")
        if named is not None and not named.isdisjoint(memory.source_indexes):
            return True
        return not self.words.isdisjoint(keywords(memory.text))

    def _named_as_previous(self, text: str) -> bool:
        _, previously, earlier = text.partition(PREVIOUSLY)
        return bool(previously) and not self.words.isdisjoint(keywords(earlier))

    def _said_before(self, memory: Said) -> bool:
        if memory.document_id in self.earlier:
            return True
        return (
            memory.document_id == self.document_id
            and bool(memory.source_indexes)
            and max(memory.source_indexes) < self.message_index
        )


def spoken_requests(subject: Subject) -> tuple[SpokenRequest, ...]:
    """The subject's pending requests to forget that quote what was said."""
    found: list[SpokenRequest] = []
    for record in subject.changes.values():
        proposal, evidence = record.proposal, record.proposal.evidence
        if (
            proposal.operation not in REQUESTS_TO_FORGET
            or record.status is not ChangeStatus.PENDING
        ):
            continue
        if evidence is None or (said := subject.sessions.get(evidence.session_id)) is None:
            continue
        words = frozenset(keywords(evidence.quote))
        named = _named_lines(subject, proposal)
        if not words and not named:
            continue
        earlier = frozenset(
            transcript_document_id(subject.id, s.session_id)
            for s in subject.sessions.values()
            if s.started_at < said.started_at
        )
        found.append(
            SpokenRequest(
                earlier,
                transcript_document_id(subject.id, evidence.session_id),
                evidence.message_index,
                words,
                (said.started_at, evidence.message_index),
                named,
            )
        )
    return tuple(found)


def _named_lines(subject: Subject, proposal: Proposal) -> dict[str, frozenset[int]]:
    if proposal.operation is not Operation.FORGET_SAID or not isinstance(proposal.value, ListValue):
        return {}
    named: dict[str, set[int]] = {}
    for session_id, index in parse_line_refs(proposal.value.items):
        named.setdefault(transcript_document_id(subject.id, session_id), set()).add(index)
    return {document: frozenset(indexes) for document, indexes in named.items()}


def without_requested(
    hits: Sequence[SearchHit], requests: Sequence[SpokenRequest]
) -> list[SearchHit]:
    if not requests:
        return list(hits)
    return [h for h in hits if not any(r.withholds(h) for r in requests)]


def requested_changes(
    subject: Subject, requests: Sequence[SpokenRequest] | None = None
) -> frozenset[UUID]:
    """The pending changes (values, not requests) said before a pending request to forget
    whose value or condition shares a keyword with the request's sentence; `requests`, the
    subject's `spoken_requests` when the caller has them."""
    if requests is None:
        requests = spoken_requests(subject)
    if not requests:
        return frozenset()
    found: set[UUID] = set()
    for record in subject.changes.values():
        proposal = record.proposal
        if record.status is not ChangeStatus.PENDING or proposal.value is None:
            continue
        if proposal.operation not in STATES_VALUE:
            continue
        said = _said(subject, record)
        if said is None:
            continue
        words = frozenset(keywords(_shown(record)))
        if any(said < r.said_at and not words.isdisjoint(r.words) for r in requests):
            found.add(record.change_id)
    return frozenset(found)


def _said(subject: Subject, record: ChangeRecord) -> tuple[datetime, int] | None:
    """When a change's evidence was said: its session's start, then its message."""
    evidence = record.proposal.evidence
    if evidence is None or (session := subject.sessions.get(evidence.session_id)) is None:
        return None
    return session.started_at, evidence.message_index


def _shown(record: ChangeRecord) -> str:
    """What a pending change's note shows of it: its value and its condition."""
    proposal = record.proposal
    value = "" if proposal.value is None else render(proposal.value)
    return f"{value} {proposal.condition or ''}"
