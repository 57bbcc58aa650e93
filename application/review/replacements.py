"""Requests to forget read once more, for the value that replaces the held one (ADR 0151).

A subject who asks to forget a value often says in the same sentence what replaces it
("please remove my number, I'd rather you just email me"). The proposer keeps request
sentences out of extraction so that the words to forget never become a fact, and that also
dropped the new value. Here the extractor reads those sentences alone, asked only the
single-valued fields the subject holds a statement of (where a new value is a replacement):

- a fact feeds only a field the session's first reading gave no candidate;
- its evidence quotes only the words the extractor read as the value, never the request
  sentence, so the request's words become no note; the ledger weighs the candidate against
  the held value as any other (the same value proposes nothing).

Pure but for the extractor; logs nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import replace

from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionRequest,
    FieldSlot,
)
from factledger.application.memory.ports import Extractor
from factledger.application.proposals.candidates import Candidate, TypedReading, candidates_from
from factledger.application.proposals.schema import KindFeeds
from factledger.application.review.forget_requests import SaidRequest
from factledger.domain.transcript import Message, Role


def requests_only(
    transcript: Sequence[Message], requests: Sequence[SaidRequest]
) -> tuple[Message, ...]:
    """The transcript with each subject line holding only its request sentences (indexes
    unchanged); other subject lines empty and marked as words not kept, others' lines as said
    (the reader reads a line beside the line before it)."""
    said: dict[int, list[str]] = {}
    for request in requests:
        said.setdefault(request.message_index, []).append(request.sentence)
    out = []
    for i, message in enumerate(transcript):
        if message.role is not Role.SUBJECT:
            out.append(message)
            continue
        text = " ".join(said.get(i, ()))
        out.append(replace(message, text=text, forgotten=not text))
    return tuple(out)


def replaceable(fields: Sequence[FieldSlot]) -> tuple[FieldSlot, ...]:
    """The fields a request could say the replacement of: held, single-valued."""
    return tuple(f for f in fields if f.held and not f.many)


async def replacements_in_requests(
    extractor: Extractor,
    request: ExtractionRequest,
    requests: Sequence[SaidRequest],
    feeds: KindFeeds,
    session_id: str,
    *,
    fed: Collection[str],
    typed: TypedReading | None = None,
) -> list[Candidate]:
    """The candidates the request sentences state for held single-valued fields that `fed`
    (the fields the first reading proposed) leaves out, each quoting only its value."""
    fields = replaceable(request.fields)
    if not requests or not fields:
        return []
    transcript = requests_only(request.transcript, requests)
    facts = await extractor.extract(replace(request, transcript=transcript, fields=fields))
    lines = {r.message_index for r in requests}
    out: dict[str, Candidate] = {}
    for fact in facts:
        if fact.read_back is not None or not fact.value or not lines & set(fact.source_indexes):
            continue
        quoting = _quoting(fact, transcript)
        read = (
            candidates_from([fact], quoting, feeds, session_id)
            if typed is None
            else await asyncio.to_thread(candidates_from, [fact], quoting, feeds, session_id, typed)
        )
        for candidate in read:
            field = candidate.feed.field
            if field not in fed and field in {f.field for f in fields}:
                out[field] = candidate
    return list(out.values())


def _quoting(fact: ExtractedFact, transcript: Sequence[Message]) -> tuple[Message, ...]:
    """The transcript with the fact's line holding only the fact's value: what its evidence
    may quote of a request sentence."""
    at = max(fact.source_indexes)
    lines = list(transcript)
    lines[at] = replace(lines[at], text=fact.value or fact.text)
    return tuple(lines)
