"""Short replies that answer an agent's question: "Would you upgrade?" / "Maybe next quarter".

The reply alone says nothing; with the question it states an intent of the subject. The fact
is the subject's (the reply decides it) and cites both messages.
"""

from __future__ import annotations

import re
from functools import cache

from factledger.adapters.extraction.rules.clauses import Clauses
from factledger.adapters.extraction.rules.dates import DateMention, strip_dates
from factledger.adapters.extraction.rules.guidance import Guidance
from factledger.adapters.extraction.rules.text import clean, second_to_third, sentences, word_count
from factledger.domain.transcript import Message, Role

_AFFIRMATIONS = re.compile(
    r"\b(?:yes|yeah|yep|sure|definitely|certainly|absolutely|probably|likely|hopefully|i think|"
    r"i guess|i hope|we hope|so|that's the plan|planning to|plan to|for sure|of course|ok|okay)\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(r"^\s*(?:no|nope|not|never|nah)\b", re.IGNORECASE)
_MAX_LEFTOVER_WORDS = 1
_DETERMINERS = frozenset(
    ["a", "an", "the", "some", "more", "another", "any", "our", "their", "this", "that"]
)
_MAX_REPLY_WORDS = 12  # a longer answer states its own facts


@cache
def _hedge_regex(hedges: tuple[str, ...]) -> re.Pattern[str]:
    if not hedges:
        return re.compile(r"(?!x)x")
    return re.compile(r"\b(?:" + "|".join(re.escape(h) for h in hedges) + r")\b", re.IGNORECASE)


def reply_intent(
    clauses: Clauses, previous: Message | None, guidance: Guidance, dates: list[DateMention]
) -> tuple[str, str] | None:
    """The note and topic of an intent stated by a short reply, or None if it is not one."""
    if previous is None or previous.role not in (Role.AGENT, Role.STAFF):
        return None
    if word_count(clauses.statement) > _MAX_REPLY_WORDS or "?" not in previous.text:
        return None
    if _NEGATIVE.match(clauses.statement) or not _is_bare_reply(clauses, guidance, dates):
        return None
    topic = _question_topic(previous.text, guidance)
    if topic is None:
        return None
    text = _lead(topic, tentative=clauses.tentative) + topic
    if dates:
        text += " " + " ".join(d.annotated for d in dates)
    if clauses.condition:
        text += f", {clauses.condition}"
    return text, topic


def _lead(topic: str, *, tentative: bool) -> str:
    """ "may upgrade", but "may consider a three-year contract" / "plans on moving offices"."""
    first = topic.split(" ", 1)[0].lower()
    if first in _DETERMINERS:
        return "may consider " if tentative else "is open to "
    if first.endswith("ing"):
        return "may consider " if tentative else "plans on "
    return "may " if tentative else "plans to "


def _is_bare_reply(clauses: Clauses, guidance: Guidance, dates: list[DateMention]) -> bool:
    leftover = strip_dates(clauses.statement, dates)
    leftover = _hedge_regex(guidance.hedges).sub(" ", leftover)
    leftover = _AFFIRMATIONS.sub(" ", leftover)
    said_something = bool(dates) or clauses.tentative or leftover != clauses.statement
    return said_something and word_count(leftover) <= _MAX_LEFTOVER_WORDS


def _question_topic(text: str, guidance: Guidance) -> str | None:
    questions = [s for s in sentences(text) if s.rstrip().endswith("?")]
    for question in reversed(questions):
        for pattern in guidance.question_topics:
            match = pattern.search(question)
            if match and clean(match.group("topic")):
                return second_to_third(clean(match.group("topic")))
    return None
