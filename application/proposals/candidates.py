"""From extracted facts to candidate changes: field, value, origin, condition and evidence.

Pure. A candidate is what the model would propose if nothing were known yet; `plan` then
weighs it against the subject's profile and open proposals.

- A fact feeds the field its slot maps to (`schema`); other facts yield nothing, and neither
  does a negation ("no longer works with X": removing a value is the reviewer's call).
- Origin: `inferred` for a conclusion nobody stated (a derivation), else `stated`.
- The condition is the extractor's, verbatim; the evidence is the subject's whole sentence
  that said it (the last subject message the fact cites). An inference quotes nothing: the
  words belong to the facts it rests on, and a copy under the inference's field would outlive
  forgetting them; its rationale names the session and message instead. A value the agent
  said and the subject's next line confirmed quotes that line of the subject's (the sentence
  holding the value, else its first: the yes), and its rationale names the agent's line too.
- One candidate per field and session: a single-valued field keeps the session's last
  statement, a list field gathers every value.
- A negation of the field's value in the same session ("it's not X, it's Y") says which value
  the candidate corrects (`replaces`), unless it negates the candidate's own value.
- A typed field (number, money, date) takes the value a `ValueReader` reads from the slot's
  words, resolved against the session's day ("ninth of June sixty-eight": 1968-06-09); words
  it reads as no single value of the type feed nothing (`typed`, ADR 0158). Without a reader,
  typed fields are fed by callers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

import structlog

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.sameness import same_value
from factledger.application.memory.types import RelationKind
from factledger.application.proposals.schema import FieldFeed, KindFeeds
from factledger.application.proposals.typed import TYPED, ValueReader
from factledger.application.sentences import sentences, sentences_covering, sentences_holding
from factledger.domain.provenance import MAX_QUOTE, Evidence, Origin
from factledger.domain.transcript import Message, Role
from factledger.domain.values import MAX_ITEMS, MAX_TEXT, FieldValue, ValueType, render

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A change the model would propose for one field from one session."""

    feed: FieldFeed
    values: tuple[str, ...]  # one for a single-valued field; the items of a list field
    origin: Origin
    evidence: Evidence | None
    condition: str | None
    slots: tuple[str, ...]
    said_in: tuple[str, int] | None = None  # (session id, message index) it was drawn from
    # The value the session said no longer holds ("not X", "no longer X"): what it corrects.
    replaces: str | None = None
    # The agent's line that said the value, which the subject's line of `evidence` confirmed.
    read_back: int | None = None
    # A typed field's value as read from the words (`values` holds its rendering).
    typed: FieldValue | None = None
    # The items of a list field the session says no longer hold (`dropped`, ADR 0159): a
    # removal, not a statement of `values`.
    removes: bool = False


def whole_sentence(text: str, *, containing: Sequence[str]) -> str:
    """The sentence of `text` that holds the first of `containing` found in it, exactly as
    written, so it is a quote of the message; where words were read across a cut, the
    sentences they run over, so the quote holds what it proves (ADR 0176). Else the first
    sentence."""
    for needle in containing:
        if (quote := sentences_holding(text, needle)) is not None:
            return quote[:MAX_QUOTE]
    parts = sentences(text)
    return (parts[0] if parts else text.strip())[:MAX_QUOTE]


def _value_of(fact: ExtractedFact) -> str:
    """The slot's value, unless the statement is hedged or conditional: then the note, which
    says "may ..." (the bare value would read as a decision), without its condition."""
    if fact.value and not fact.condition:
        return fact.value
    text = fact.text
    if fact.condition and text.endswith(f", {fact.condition}"):
        text = text.removesuffix(f", {fact.condition}")
    return text


def _evidence(
    fact: ExtractedFact, transcript: Sequence[Message], session_id: str, value: str
) -> Evidence | None:
    said = [
        i
        for i in fact.source_indexes
        if 0 <= i < len(transcript) and transcript[i].role is Role.SUBJECT
    ]
    if not said:
        return None
    index = said[-1]
    quote = whole_sentence(transcript[index].text, containing=(value, fact.condition or ""))
    return Evidence(session_id, index, quote) if quote else None


def _covering(
    evidence: Evidence | None, values: Sequence[str], transcript: Sequence[Message]
) -> Evidence | None:
    """A list's evidence quoting the sentences of its line that hold every item said there
    (ADR 0177); items said in another line stay out of it (a quote is of one line)."""
    if evidence is None:
        return None
    quote = sentences_covering(transcript[evidence.message_index].text, values)
    return evidence if quote is None else replace(evidence, quote=quote[:MAX_QUOTE])


def _fits(feed: FieldFeed, value: str) -> bool:
    if not value.strip() or len(value) > MAX_TEXT:
        return False
    return feed.type in {ValueType.TEXT, ValueType.LIST}


@dataclass(frozen=True, slots=True)
class TypedReading:
    """How typed fields are read in one session: the reader and the day the session was said,
    which "tomorrow" or "in two weeks" count from."""

    reader: ValueReader
    said_on: date

    def value(self, feed: FieldFeed, fact: ExtractedFact) -> FieldValue | None:
        """The field's value read from the slot's own words (a hedge's note, "may ...", is no
        value; its condition stays). A reader that fails reads nothing: the session's other
        fields are still proposed, where a raised error would retry and dead-letter them."""
        words = fact.value or fact.text
        try:
            return self.reader.read(feed.type, words, said_on=self.said_on, hints=feed.hints)
        except Exception as exc:  # a parsing library's fault on one phrase
            log.warning(
                "proposals.typed_reading_failed", field=feed.field, error_type=type(exc).__name__
            )
            return None


def candidates_from(
    facts: Sequence[ExtractedFact],
    transcript: Sequence[Message],
    feeds: KindFeeds,
    session_id: str,
    typed: TypedReading | None = None,
) -> list[Candidate]:
    """The session's candidates, one per field, in the order their fields were first fed."""
    by_field: dict[str, Candidate] = {}
    negated: dict[str, str] = {}
    for fact in facts:
        feed = feeds.field_for(fact.slot)
        if feed is not None and fact.negated and fact.value:
            negated[feed.field] = fact.value
        if feed is None or fact.slot is None or fact.negated:
            continue  # a negation ("no longer works with X") proposes no value
        read: FieldValue | None = None
        if feed.type in TYPED:
            read = None if typed is None else typed.value(feed, fact)
            if read is None:
                continue
            value = render(read)
        else:
            value = _value_of(fact)
            if not _fits(feed, value):
                continue
        inferred = fact.is_inference or fact.relation is RelationKind.DERIVES
        said = value if read is None else (fact.value or fact.text)
        evidence = _evidence(fact, transcript, session_id, said)
        candidate = Candidate(
            feed=feed,
            values=(value,),
            origin=Origin.INFERRED if inferred else Origin.STATED,
            evidence=None if inferred else evidence,
            condition=fact.condition,
            slots=(fact.slot,),
            said_in=None if evidence is None else (session_id, evidence.message_index),
            read_back=fact.read_back,
            typed=read,
        )
        if candidate.origin is Origin.STATED and candidate.evidence is None:
            continue  # a stated change must quote the subject; this fact cites no such line
        earlier = by_field.get(feed.field)
        if earlier is not None and feed.many:
            values = (*earlier.values, *(v for v in candidate.values if v not in earlier.values))
            candidate = replace(
                earlier,
                values=values[:MAX_ITEMS],
                slots=(*earlier.slots, fact.slot),
                evidence=_covering(earlier.evidence, values, transcript),
            )
        by_field[feed.field] = candidate
    return [_correcting(c, negated.get(f)) for f, c in by_field.items()]


def _correcting(candidate: Candidate, negated: str | None) -> Candidate:
    if negated is None or candidate.feed.many:
        return candidate
    if any(same_value(negated, v) for v in candidate.values):
        return candidate  # "no longer X" then "X again": it corrects nothing
    return replace(candidate, replaces=negated)
