"""Requests to forget said in conversation: noticed by the sentence judgement, placed on the
field they concern, and kept out of everything drawn from the transcript.

A subject who says "please don't keep my home address" asks for something only a decision
may grant: the request becomes a pending change of that field (operation `forget`) in the
review queue, decided by the subject or a reviewer like any other change. Until then (and
after) the request sentence is no fact and no note: extraction and the memory backend get
the transcript without it.

A request that names some items of a list field and not all ("take Vatly off whatever notes
you have") asks to forget those items: approving it keeps the others (ADR 0160).

The field a request concerns, in order: a field whose name the sentence says ("forget our
budget"); a field whose held or proposed value it says ("forget the 50k"); else the field
the judgement's field head ranks first for the sentence. Only fields with words to forget
are candidates (a value, or a change's words since the field's latest forget). A request
that concerns none of them proposes nothing; its sentence is still kept out of memories.
Pure but for the judge; logs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from factledger.application.judgement.ports import SentenceJudge
from factledger.application.memory.lexical import keywords
from factledger.application.memory.sameness import states
from factledger.application.proposals.forget_requests import (
    ForgetRequestCandidate,
    has_open_request,
)
from factledger.domain.provenance import MAX_QUOTE, ChangeStatus, Evidence
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message, Role
from factledger.domain.values import JsonValue, ListValue, TextValue

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NAME_PART = re.compile(r"[^\W_]+")
MIN_NAME_PART = 3  # shorter parts of a field name ("id", "of") say nothing on their own
MIN_FIELD_P = 0.05  # below this the field head does not know what the request is about


@dataclass(frozen=True, slots=True)
class SaidRequest:
    """A sentence of a subject's message that asks to forget something."""

    message_index: int
    sentence: str  # exactly as said: a substring of the message


def sentences_of(text: str) -> list[str]:
    return [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]


async def said_requests(transcript: Sequence[Message], judge: SentenceJudge) -> list[SaidRequest]:
    """The subject's sentences the judge reads as requests to forget."""
    said = [
        (i, sentence)
        for i, message in enumerate(transcript)
        if message.role is Role.SUBJECT and not message.forgotten
        for sentence in sentences_of(message.text)
    ]
    if not said:
        return []
    judged = await judge.judge([sentence for _, sentence in said])
    return [
        SaidRequest(i, sentence)
        for (i, sentence), judgement in zip(said, judged, strict=True)
        if judgement.forget_request
    ]


def without_requests(
    transcript: Sequence[Message], requests: Iterable[SaidRequest]
) -> tuple[Message, ...]:
    """The transcript without the request sentences (indexes unchanged): a line that said
    nothing else keeps its place, empty and marked as words not kept."""
    dropped: dict[int, list[str]] = {}
    for request in requests:
        dropped.setdefault(request.message_index, []).append(request.sentence)
    out = []
    for i, message in enumerate(transcript):
        if i not in dropped:
            out.append(message)
            continue
        text = message.text
        for sentence in dropped[i]:
            text = text.replace(sentence, "", 1)
        kept = text.strip()  # the other sentences as said, so quotes of them still match
        out.append(replace(message, text=kept, forgotten=not kept))
    return tuple(out)


async def screened(
    transcript: Sequence[Message], judge: SentenceJudge | None
) -> tuple[Message, ...]:
    """The transcript as memories may be drawn from it: without requests to forget."""
    if judge is None:
        return tuple(transcript)
    return without_requests(transcript, await said_requests(transcript, judge))


async def screened_summary(summary: JsonValue, judge: SentenceJudge | None) -> JsonValue:
    """A session's summary without the sentences that ask to forget ("the lead asked us to
    forget their budget of 50k" restates what they asked to have forgotten)."""
    if judge is None:
        return summary
    texts: list[str] = []
    _collect(summary, texts)
    said = [(t, s) for t in texts for s in sentences_of(t)]
    judged = await judge.judge([s for _, s in said]) if said else []
    asks = {s for (_, s), j in zip(said, judged, strict=True) if j.forget_request}
    return _without(summary, asks) if asks else summary


def _collect(value: JsonValue, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, into)
    elif isinstance(value, list):
        for v in value:
            _collect(v, into)


def _without(value: JsonValue, asks: set[str]) -> JsonValue:
    if isinstance(value, str):
        for sentence in asks:
            value = value.replace(sentence, "")
        return value.strip()
    if isinstance(value, dict):
        return {k: _without(v, asks) for k, v in value.items()}
    if isinstance(value, list):
        return [_without(v, asks) for v in value]
    return value


def _name_parts(field: str) -> list[str]:
    return [p.lower() for p in _NAME_PART.findall(field) if len(p) >= MIN_NAME_PART]


def _names(sentence: str, field: str) -> bool:
    """Whether the sentence says the field's name: every longer part of it, as a word start
    ("budgets" says `budget`; "home address" and "home-address" say `home_address`)."""
    parts = _name_parts(field)
    lowered = sentence.lower()
    return bool(parts) and all(re.search(rf"\b{re.escape(p)}", lowered) for p in parts)


def _values_of(subject: Subject, field: str) -> list[str]:
    values = []
    current = subject.fields.get(field)
    held = [] if current is None else [current.value]
    proposed = [
        subject.changes[c].proposal.value
        for c in subject.unforgotten_changes(field)
        if subject.changes[c].status is not ChangeStatus.FORGOTTEN
    ]
    for value in (*held, *proposed):
        match value:
            case TextValue(text):
                values.append(text)
            case ListValue(items):
                values.extend(items)
    return values


def forgettable_fields(subject: Subject, kind_fields: Sequence[str]) -> list[str]:
    """The fields a request could concern: those with words to forget, the kind's first."""
    named = {*subject.fields, *(c.field for c in subject.changes.values())}
    ordered = [*kind_fields, *sorted(named - set(kind_fields))]
    return [f for f in ordered if subject.holds_words_of(f)]


async def place_requests(
    subject: Subject,
    session_id: str,
    requests: Sequence[SaidRequest],
    kind_fields: Sequence[str],
    judge: SentenceJudge,
) -> list[ForgetRequestCandidate]:
    """One candidate per field a request concerns (a field with a request open already, or
    one asked twice in the session, gets no second)."""
    fields = forgettable_fields(subject, kind_fields)
    placed: dict[str, ForgetRequestCandidate] = {}
    for request in requests:
        chosen = await _place(subject, request.sentence, fields, judge)
        if chosen is None:
            continue
        field, how = chosen
        if field in placed or has_open_request(subject, field):
            continue
        evidence = Evidence(session_id, request.message_index, request.sentence[:MAX_QUOTE])
        items = named_items(request.sentence, subject.held_items(field))
        placed[field] = ForgetRequestCandidate(field, evidence, how, items)
    return list(placed.values())


def named_items(sentence: str, held: Sequence[str]) -> tuple[str, ...]:
    """The items of the field's list (`Subject.held_items`: confirmed or pending) the request
    names, when it names some and not all (ADR 0160: approving it keeps the others); none
    when it names the field as a whole. An item is named when the sentence states it, or says
    a keyword no other item has ("take Vatly off" names "Vatly Ltd" beside "Acme Ltd");
    keywords are memories-mode search's."""
    if len(held) < 2:
        return ()
    said = set(keywords(sentence))
    words = {item: set(keywords(item)) for item in held}
    named = tuple(
        item
        for item in held
        if states(sentence, item)
        or said & (words[item] - set().union(*(w for i, w in words.items() if i != item)))
    )
    return named if len(named) < len(held) else ()


async def _place(
    subject: Subject, sentence: str, fields: Sequence[str], judge: SentenceJudge
) -> tuple[str, str] | None:
    for field in fields:
        if _names(sentence, field):
            return field, "name"
    for field in fields:
        if any(states(sentence, value) for value in _values_of(subject, field)):
            return field, "value"
    ranked = await judge.field_of(sentence, fields)
    if ranked is None or ranked[1] < MIN_FIELD_P:
        return None
    return ranked[0], "meaning"
