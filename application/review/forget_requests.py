"""Requests to forget said in conversation: noticed by the sentence judgement, placed on the
field they concern, and kept out of everything drawn from the transcript.

A subject who says "please don't keep my home address" asks for something only a decision
may grant: the request becomes a pending change of that field (operation `forget`) in the
review queue, decided by the subject or a reviewer like any other change. Until then (and
after) the request sentence is no fact and no note: extraction and the memory backend get
the transcript without it.

A request that names some items of a list field and not all ("take Vatly off whatever notes
you have") asks to forget those items: approving it keeps the others (ADR 0160).

The fields a request concerns are read from what each field holds (ADR 0172): its closeness
to the request is the judge's similarity of the sentence with the field's name plus its best
similarity with the field's own words (the lines that stated it, its held and proposed
values). "please remove my PayPal" is close to "I pay everything by PayPal"; "take him off my
file" after "Dev and I have split up" to "My partner, Dev Kapoor". Every field whose name the
sentence says concerns it when it is also `NAMED_MIN` close ("delete my job title and
employer"; not `name` for "remove his name and number" when the name held is not close);
otherwise the closest field, when it is `MEANING_MIN` close. With a second reading (the
packaged multilingual encoder's, ADR 0200), each similarity is the mean of the judge's and
that one's: the judge's encoder reads English, and a request said in German or half in
Portuguese was read as close to nothing in particular. With a field reader's `FieldMentions`
(ADR 0218), the closest field concerns a request only where the reader reads the sentence as
speaking of it: closeness alone placed "strike what I told you about my knees" on a home
buyer's bedrooms, the nearest field holding words. Only fields with words to
forget are candidates (a value, or a change's words since the field's latest forget). A
request that concerns none of them ("forget what I told you about my ex") names the
subject's earlier line closest to it instead (ADRs 0174, 0175; a deployment may turn that
off, and then it proposes nothing): a request to forget what was said. Either way its
sentence is kept out of memories. Pure but for the judge; logs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from uuid import UUID

from factledger.application.judgement.ports import FieldMentions, SentenceCloseness, SentenceJudge
from factledger.application.memory.lexical import keywords
from factledger.application.memory.sameness import states
from factledger.application.proposals.forget_requests import (
    ForgetRequestCandidate,
    has_open_request,
)
from factledger.application.sentences import sentences
from factledger.domain.proposal import said_order
from factledger.domain.provenance import MAX_QUOTE, REQUESTS_TO_FORGET, ChangeStatus, Evidence
from factledger.domain.said_lines import SAID_LINES
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message, Role
from factledger.domain.values import JsonValue, ListValue, TextValue

_NAME_PART = re.compile(r"[^\W_]+")
MIN_NAME_PART = 3  # shorter parts of a field name ("id", "of") say nothing on their own
# Bars on a field's closeness (name plus best words, each a cosine: up to 2), fitted on the
# nine blind dev halves' requests with the shipped embedder (ADRs 0170-0172).
NAMED_MIN = 0.4
MEANING_MIN = 0.3
# A request that concerns no field names the line closest to it (ADR 0174), among the latest
# `LINES_READ` said before it: a line's closeness is its best sentence's cosine with the
# request plus `SHARED_WORD` for each keyword they share (up to `SHARED_COUNTED`), at least
# `LINE_MIN`; fitted on the blind dev halves' requests (one line, not three: a reviewer's
# approval forgets every line named).
LINE_MIN = 0.3
SHARED_WORD = 0.2
SHARED_COUNTED = 3
MAX_LINES = 1
LINES_READ = 200


@dataclass(frozen=True, slots=True)
class SaidRequest:
    """A sentence of a subject's message that asks to forget something."""

    message_index: int
    sentence: str  # exactly as said: a substring of the message


async def said_requests(transcript: Sequence[Message], judge: SentenceJudge) -> list[SaidRequest]:
    """The subject's sentences the judge reads as requests to forget."""
    said = [
        (i, sentence)
        for i, message in enumerate(transcript)
        if message.role is Role.SUBJECT and not message.forgotten
        for sentence in sentences(message.text)
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
    said = [(t, s) for t in texts for s in sentences(t)]
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
    proposed = [subject.changes[c].proposal.value for c in _unforgotten(subject, field)]
    for value in (*held, *proposed):
        match value:
            case TextValue(text):
                values.append(text)
            case ListValue(items):
                values.extend(items)
    return values


def _unforgotten(subject: Subject, field: str) -> list[UUID]:
    return [
        c
        for c in subject.unforgotten_changes(field)
        if subject.changes[c].status is not ChangeStatus.FORGOTTEN
    ]


def words_held(subject: Subject, field: str) -> list[str]:
    """What the subject holds of a field, as said: the lines its changes quote, its values."""
    quoted = [
        evidence.quote
        for c in _unforgotten(subject, field)
        if (evidence := subject.changes[c].proposal.evidence) is not None
    ]
    return list(dict.fromkeys([*quoted, *_values_of(subject, field)]))


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
    *,
    name_lines: bool = False,
    second_reading: SentenceCloseness | None = None,
    mentions: FieldMentions | None = None,
) -> list[ForgetRequestCandidate]:
    """One candidate per field a request concerns (a field with a request open already, or
    one asked twice in the session, gets no second); with `name_lines`, the session's first
    request that concerns no field names the lines it concerns instead (ADR 0174); with a
    `second_reading`, fields are placed by both readings' mean closeness (ADR 0200); with
    `mentions`, a field placed by meaning only where they read the request speaking of it
    (ADR 0218)."""
    fields = forgettable_fields(subject, kind_fields)
    placed: dict[str, ForgetRequestCandidate] = {}
    for request in requests:
        evidence = Evidence(session_id, request.message_index, request.sentence[:MAX_QUOTE])
        concerned = await fields_concerned(
            subject, request.sentence, fields, judge, second_reading, mentions, kind_fields
        )
        if name_lines and not concerned and SAID_LINES not in placed:
            lines = await lines_concerned(subject, session_id, request, judge)
            if lines:
                placed[SAID_LINES] = ForgetRequestCandidate(
                    SAID_LINES, evidence, "meaning", lines=lines
                )
        for field, how in concerned:
            if field in placed or has_open_request(subject, field):
                continue
            items = named_items(request.sentence, subject.held_items(field))
            placed[field] = ForgetRequestCandidate(field, evidence, how, items)
    return list(placed.values())


def lines_before(
    subject: Subject, session_id: str, message_index: int
) -> list[tuple[str, int, str]]:
    """The subject's lines said before a request (earlier sessions, earlier messages of its
    own), still readable and not themselves a request's evidence, the latest `LINES_READ`."""
    asked_at = said_order(subject.sessions[session_id], message_index)
    requests = {
        (evidence.session_id, evidence.message_index)
        for c in subject.changes.values()
        if c.operation in REQUESTS_TO_FORGET and (evidence := c.proposal.evidence) is not None
    }
    said = sorted(
        (order, session.session_id, text)
        for session in subject.sessions.values()
        for index, (role, text) in enumerate(session.messages)
        if role is Role.SUBJECT
        and text
        and (order := said_order(session, index)) < asked_at
        and (session.session_id, index) not in requests
    )
    return [(s, order[2], text) for order, s, text in said[-LINES_READ:]]


async def lines_concerned(
    subject: Subject, session_id: str, request: SaidRequest, judge: SentenceJudge
) -> tuple[tuple[str, int], ...]:
    """The lines a request that concerns no field speaks of: the closest to its sentence
    (`line_closeness`), at most `MAX_LINES`, each at least `LINE_MIN` close, in the order
    they were said."""
    said = lines_before(subject, session_id, request.message_index)
    if not said:
        return ()
    closeness = await line_closeness(request.sentence, [text for _, _, text in said], judge)
    ranked = sorted(range(len(said)), key=lambda n: -closeness[n])
    chosen = sorted(n for n in ranked[:MAX_LINES] if closeness[n] >= LINE_MIN)
    return tuple((said[n][0], said[n][1]) for n in chosen)


async def line_closeness(sentence: str, lines: Sequence[str], judge: SentenceJudge) -> list[float]:
    """How close each line is to a request: its best sentence's similarity by the judge (a
    line says several things; the request speaks of one), plus `SHARED_WORD` for each keyword
    of memories-mode search the two share ("my ex" and "My ex and I split up"), up to
    `SHARED_COUNTED`."""
    parts = [(n, part) for n, line in enumerate(lines) for part in sentences(line)]
    similarity = await judge.similarities(sentence, [part for _, part in parts])
    best = [-1.0] * len(lines)
    for (n, _), value in zip(parts, similarity, strict=True):
        best[n] = max(best[n], value)
    asked = set(keywords(sentence))
    return [
        best[n] + SHARED_WORD * min(len(asked & set(keywords(line))), SHARED_COUNTED)
        for n, line in enumerate(lines)
    ]


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


async def read_closeness(
    sentence: str,
    texts: Sequence[str],
    judge: SentenceJudge,
    second_reading: SentenceCloseness | None = None,
) -> list[float]:
    """Each text's similarity to the sentence: the judge's, or its mean with a second
    reading's (both cosines; the thresholds stay the judge's, as ADR 0200 judged them)."""
    first = await judge.similarities(sentence, texts)
    if second_reading is None:
        return first
    second = await second_reading.similarities(sentence, texts)
    return [(a + b) / 2 for a, b in zip(first, second, strict=True)]


Spans = dict[str, tuple[int, int]]


def field_texts(words: Mapping[str, Sequence[str]]) -> tuple[list[str], Spans]:
    """What a request is compared with: each field's name (as words), then the field's own
    words; and, by field, where its run starts and how many own words follow the name."""
    texts: list[str] = []
    spans: Spans = {}
    for field, own in words.items():
        spans[field] = (len(texts), len(own))
        texts += [field.replace("_", " "), *own]
    return texts, spans


def closeness_by_field(similarity: Sequence[float], spans: Spans) -> dict[str, float]:
    """Each field's closeness to a request: its name's similarity plus its best own words'."""
    return {
        field: similarity[at] + max(similarity[at + 1 : at + 1 + n], default=0.0)
        for field, (at, n) in spans.items()
    }


async def fields_concerned(
    subject: Subject,
    sentence: str,
    fields: Sequence[str],
    judge: SentenceJudge,
    second_reading: SentenceCloseness | None = None,
    mentions: FieldMentions | None = None,
    kind_fields: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """The fields (of `fields`) a request concerns, each with how it was placed: "name" for
    those whose name the sentence says, else "meaning" for the closest, when `mentions` (if
    given, asked of the kind's fields and `fields` together) read the sentence as speaking
    of it."""
    if not fields:
        return []
    texts, spans = field_texts({field: words_held(subject, field) for field in fields})
    similarity = await read_closeness(sentence, texts, judge, second_reading)
    closeness = closeness_by_field(similarity, spans)
    named = [f for f in fields if _names(sentence, f) and closeness[f] >= NAMED_MIN]
    if named:
        return [(f, "name") for f in named]
    closest = max(fields, key=closeness.__getitem__)
    if closeness[closest] < MEANING_MIN:
        return []
    if mentions is not None:
        asked = list(dict.fromkeys([*kind_fields, *fields]))
        spoken = await mentions.speaks_of(sentence, asked)
        if not spoken[asked.index(closest)]:
            return []
    return [(closest, "meaning")]
