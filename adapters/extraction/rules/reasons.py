"""Reasons: which fact a reason explains, and the note that ties them together.

- A reason in the sentence of its change ("We switched to Y because ...") explains that change.
- A reason given later explains the latest change of the conversation: a sentence that only
  points back ("That was because of the delays", "It came down to the claims process",
  "Mainly because ...") and the answer to an agent's "why?" ("What made you switch?" /
  "Mostly the outages."). It is never a loose memory while a change is there to explain.
- The note is an extension of the change that says what it replaced: "works with Y,
  previously X, because of the delivery delays". The old value comes from an earlier fact of
  the conversation, else from the namespace's current fact of the slot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factledger.adapters.extraction.rules.guidance import Guidance
from factledger.adapters.extraction.rules.links import Draft
from factledger.adapters.extraction.rules.notes import (
    is_fragment,
    without_filler,
    without_softeners,
)
from factledger.adapters.extraction.rules.text import clean, expand_contractions, neutral_pronouns
from factledger.application.memory.extraction import KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

_ASKS_WHY = re.compile(
    r"\b(?:why|how come|what made (?:you|them)|what prompted|what (?:was|is) (?:behind|the reason)|"
    r"what led to|what happened|what changed|reason for)\b",
    re.IGNORECASE,
)
# A statement that only points back at what was said before ("That was mostly", "It").
_POINTER = re.compile(
    r"^(?:and |so )?(?:that|it|this|which)(?:'s| is| was| has been| had been)?"
    r"(?: (?:mostly|mainly|partly|largely|really|all|just|probably|simply|basically))*$",
    re.IGNORECASE,
)
# A relative clause or aside after the reason itself: the note keeps the reason only.
_REASON_TAIL = re.compile(r",\s*(?:which|who|so|and|but)\b.*$", re.IGNORECASE)
_DATE_NOTE = re.compile(r"\s*\([^)]*\)")


def asks_why(message: Message | None) -> bool:
    """An agent's or staff member's question about why something happened."""
    return (
        message is not None
        and message.role in (Role.AGENT, Role.STAFF)
        and "?" in message.text
        and _ASKS_WHY.search(message.text) is not None
    )


def is_pointer(statement: str) -> bool:
    return _POINTER.match(statement.strip(" ,")) is not None


def explained_by_later_reason(drafts: Sequence[Draft]) -> Draft | None:
    """The latest stated change of the conversation, else its latest stated fact."""
    stated = [d for d in drafts if not d.is_inference and d.relation is not RelationKind.EXTENDS]
    changes = [d for d in stated if d.relation is RelationKind.UPDATES]
    if changes:
        return changes[-1]
    return stated[-1] if stated else None


def reason_words(reason: str) -> str:
    """A reason clause as it goes into a note: third person, no filler, no trailing aside."""
    text = _REASON_TAIL.sub("", without_filler(clean(expand_contractions(reason))))
    return neutral_pronouns(text)


def answer_as_reason(sentence: str) -> tuple[str, str]:
    """An answer to "why?" as (opener, reason): a noun phrase is "because of" it ("Mostly the
    outages." -> "because of the outages"); a clause is "because" it."""
    text = without_softeners(clean(expand_contractions(sentence)))
    if _COMMON_OPENING.match(text):  # a name keeps its capital
        text = text[:1].lower() + text[1:]
    return ("because of" if is_fragment(text) else "because"), reason_words(text)


_COMMON_OPENING = re.compile(r"^(?:The|Their|Our|My|We|It|They|That|This|A|An|Better|Worse)\b")


def previous_value(
    explained: Draft, drafts: Sequence[Draft], known: Sequence[KnownFact], guidance: Guidance
) -> str | None:
    """The value the explained change replaced, when it is a change of a one-value slot."""
    spec = guidance.slot(explained.slot or "")
    if spec is None or not spec.single_valued or explained.relation is not RelationKind.UPDATES:
        return None
    earlier = [
        d.value
        for d in drafts
        if d is not explained and d.slot == explained.slot and d.value and not d.negated
    ]
    if earlier:
        return earlier[-1] if earlier[-1] != explained.value else None
    for fact in reversed(known):
        if fact.slot == spec.name:
            value = _value_in(fact.text, [p.text for p in spec.patterns if not p.updates])
            if value and value != explained.value:
                return value
    return None


# Openers that read as the subject's words in a note are said the note's way.
_NOTE_OPENERS = {
    "the reason was": "because",
    "the reason is": "because",
    "came down to": "because of",
    "comes down to": "because of",
    "was down to": "because of",
}
_THAT = re.compile(r"^that\s+", re.IGNORECASE)


def reason_note(explained: Draft, opener: str, because: str, previous: str | None) -> str:
    if opener in _NOTE_OPENERS:
        opener, because = _NOTE_OPENERS[opener], _THAT.sub("", because)
    head = explained.text
    if previous is None:
        return f"{head} {opener} {because}"
    return f"{head}, previously {previous}, {opener} {because}"


def reason_draft(explained: Draft, text: str, index: int) -> Draft:
    return Draft(
        "",
        text,
        None,
        sorted({*explained.sources, index}),
        relation=RelationKind.EXTENDS,
        related_to=[explained.key],
        condition=explained.condition,
    )


def _value_in(note: str, templates: Sequence[str]) -> str | None:
    """The value of a note written from one of `templates` ("works with {value}")."""
    bare = _DATE_NOTE.sub("", note).strip()
    for template in sorted(templates, key=len, reverse=True):
        head, _, tail = template.partition("{value}")
        if bare.lower().startswith(head.lower()) and (not tail or tail in bare):
            value = bare[len(head) :]
            value = value[: value.index(tail)] if tail else value
            return value.split(",")[0].strip() or None
    return None
