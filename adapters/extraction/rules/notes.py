"""What a plain note may be made of: never a fragment, never a filler word.

A note is a short statement about the subject, not their sentence with its pronouns swapped:

- a fragment ("Mostly the invoices.", "Only on weekdays.") says nothing on its own, so it is
  no note (as a reply to "why?" it is a reason; see `reasons`);
- filler and softeners ("honestly", "basically", "kind of", "you know", ", to be fair") go;
- "My team and I look after X" is about the subject, with their team: "looks after X with
  their team", not "their team and the subject look after X".
"""

from __future__ import annotations

import re

from factledger.adapters.extraction.rules.clauses import without_interjection
from factledger.adapters.extraction.rules.text import conjugate

_FILLER = (
    r"(?:honestly|basically|literally|actually|kind of|sort of|you know|i mean|to be fair|"
    r"to be honest|tbh|pretty much|so yeah|yeah|anyway|i suppose|i guess|if (?:i'm|i am) honest)"
)
_FILLER_ASIDE = re.compile(rf",\s*{_FILLER}\s*,\s*", re.IGNORECASE)  # "We do, you know, ..."
_FILLER_WORDS = re.compile(rf"(?:^|(?<=[\s,])){_FILLER}\b,?", re.IGNORECASE)
# Adverbs that soften a reply without adding to it ("Mostly the outages.").
_SOFTENERS = re.compile(
    r"(?:^|(?<=[\s,]))(?:mostly|mainly|largely|partly|primarily|probably|really|roughly|"
    r"simply|just|basically|i think)\b,?",
    re.IGNORECASE,
)
# Something that can carry a statement: a pronoun and the word after it, an auxiliary or a
# common verb, a regular past tense, a negation, a noun phrase and a verb in -s with more after
# it ("my first paycheck comes next Friday"), or an opening -ing verb ("training for a race").
_VERB_HINT = re.compile(
    r"\b(?:I|we|they|he|she|you|it)(?:'[a-z]+)?\s+\w+|\b(?:is|are|was|were|be|been|am|has|have|had|do|"
    r"does|did|can|could|will|would|shall|should|may|might|must|went|got|made|took|saw|came|"
    r"left|began|became|bought|sold|ran|met|found|felt|thought|told|gave|kept|said|wrote|won|"
    r"lost|spent|built|brought|paid|sent|grew|goes|gets|makes|takes|needs|wants|likes|loves|"
    r"works|runs|uses|keeps|feels|seems|looks|sounds|comes|starts|ends|begins|helps|means|"
    r"happens|lives|pays|costs|matters|depends|lasts|opens|closes)\b|\b\w{2,}ed\b|n't\b"
    r"|^(?:my|our|the|their|his|her|its|this|that)\s+(?:[\w'-]+\s+){0,3}?[a-z]+s\s+\w"
    r"|^(?!(?:nothing|something|anything|everything|morning|evening|during)\b)[a-z]{3,}ing\b",
    re.IGNORECASE,
)
_WITH_PARTNER = re.compile(
    r"^(?:my|our) (?P<who>(?:[\w'-]+ ){0,2}[\w'-]+) and I (?P<rest>.+)$", re.IGNORECASE
)
_SPACES = re.compile(r"\s{2,}")
# A sentence's first word that is capitalised only for opening it ("The export keeps failing").
_OPENING_WORD = re.compile(
    r"^(?:The|A|An|This|That|These|Those|Our|My|Your|Their|Its|His|Her|Every|Each|Some|All|"
    r"None|Nobody|Everyone|It|We|They|There)\b"
)


def without_filler(text: str) -> str:
    """The text without filler words and softening asides, punctuation tidied."""
    text = _FILLER_WORDS.sub(" ", _FILLER_ASIDE.sub(" ", text))
    text = re.sub(r"\s*,\s*(?=,|$)", "", text)  # an aside removed leaves a dangling comma
    text = re.sub(r"^\s*,\s*", "", text)
    return _SPACES.sub(" ", text).strip(" ,")


def without_softeners(text: str) -> str:
    return _SPACES.sub(" ", _SOFTENERS.sub(" ", without_filler(text))).strip(" ,")


def is_fragment(text: str) -> bool:
    """No verb to carry a statement: "Mostly the invoices", "For the warehouse, mainly"."""
    return _VERB_HINT.search(without_softeners(without_interjection(text))) is None


def with_partner(text: str) -> str | None:
    """ "My team and I look after the bays" -> "looks after the bays with their team"."""
    match = _WITH_PARTNER.match(text)
    if match is None:
        return None
    return f"{conjugate(match.group('rest'))} with their {match.group('who')}"


def mid_sentence(value: str) -> str:
    """A value as it reads inside a note: "complained that the export keeps failing", not
    "... that The export ..."; a name ("Routeplanner", "iPhone") keeps its capital."""
    return _OPENING_WORD.sub(lambda m: m.group(0).lower(), value, count=1)
