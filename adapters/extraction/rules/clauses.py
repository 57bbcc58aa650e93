"""Cuts a sentence into its statement, its reason ("because ...") and its condition ("if ...").

Hedges and conditions are kept verbatim: they decide that a statement is an intent, not a
decision, and they travel with the fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from factledger.adapters.extraction.rules.guidance import Guidance

# "if" that introduces an embedded question or a comparison, not a condition.
_NOT_CONDITION_BEFORE = re.compile(
    r"\b(?:as|even|see|ask|asked|wonder|wondering|check|know|knows|sure|unsure|whether)\s*$",
    re.IGNORECASE,
)
# "since" is a time, not a reason, when a date or a moment follows ("since 2020", "since May").
_SINCE_TIME = re.compile(
    r"^\s*(?:\d|then|ever|last|yesterday|childhood|birth|forever|the (?:start|beginning)|"
    r"(?:we|I|you|they) (?:last |first )?(?:talked|spoke|met|chatted|saw|caught up)\b|"
    r"(?:I|we|you|they|he|she|it) (?:\w+ed|was|were|got|left|began|came|went|met|had|became)\b|"
    r"(?:we|I|you|they) (?:last|first)\b|(?:our|my|your|the) (?:last|first)\b|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:this|last) (?:week|month|year|spring|summer|"
    r"autumn|fall|winter))",
    re.IGNORECASE,
)
# "We have since gone over to X": an adverb of time after an auxiliary, not a reason.
_SINCE_ADVERB = re.compile(r"\b(?:have|has|had|'ve|'s|'d|ever|long)$", re.IGNORECASE)
_INTERJECTION = re.compile(
    r"^(?:(?:wow|oh|ooh|hey|hi|hello|yeah|yes|yep|no|nope|nah|well|ok|okay|haha|lol|omg|aww*|"
    r"ah|hmm+|so|sure|great|cool|perfect|right|thanks|thank you)\b"
    r"(?:\s+(?-i:[A-Z][a-z]+)\b)?[\s,!.]*)+",  # "Hello Tom," greets someone by name
    re.IGNORECASE,
)
_PARTS = re.compile(r"\s*[,;:\u2013\u2014]\s*|\s+-\s+")
_VOCATIVE = re.compile(r",\s*(?:[A-Z][a-z]+|thanks|thank you)[\s!.?]*$")


@dataclass(frozen=True, slots=True)
class Clauses:
    """One sentence, cut up. `statement` still holds the hedge words; `body` is the sentence
    without its reason (the text of a plain-sentence fact)."""

    statement: str
    body: str
    reason_opener: str | None
    reason: str | None
    condition: str | None
    hedge: str | None

    @property
    def tentative(self) -> bool:
        return self.condition is not None or self.hedge is not None


def split_clauses(sentence: str, guidance: Guidance) -> Clauses:
    text = sentence.strip().rstrip(".!")
    body, opener, reason = _split_reason(text, guidance.reason_openers)
    statement, condition = _split_condition(body, guidance.condition_openers)
    hedge = _find_hedge(statement, guidance.hedges)
    return Clauses(statement, body, opener, reason, condition, hedge)


def is_filler(sentence: str, guidance: Guidance) -> bool:
    """Greetings, thanks, small talk and requests about memory: nothing a note about the
    subject should hold. A sentence is small talk when it is one of the guidance's filler
    phrases, or when each of its comma-separated parts is ("Sorry for the slow reply, it's
    been hectic"; "Can't complain, really")."""
    text = sentence.strip().rstrip(".!?").strip()
    if _is_filler_part(text, guidance):
        return True
    parts = [p for p in _PARTS.split(text) if p.strip(" ,")]
    return len(parts) > 1 and all(_is_filler_part(p, guidance) for p in parts)


def _is_filler_part(text: str, guidance: Guidance) -> bool:
    text = text.strip(" ,;-")
    if any(p.fullmatch(text) for p in guidance.filler):
        return True
    core = _VOCATIVE.sub("", _INTERJECTION.sub("", text)).strip(" ,!.?")
    return not core or any(p.fullmatch(core) for p in guidance.filler)


def without_interjection(text: str) -> str:
    return _INTERJECTION.sub("", text).strip()


def _split_reason(text: str, openers: tuple[str, ...]) -> tuple[str, str | None, str | None]:
    for match in _opener_regex(openers).finditer(text):
        after = text[match.end() :]
        opener = match.group(0).strip()
        before = text[: match.start()].rstrip(" ,")
        if opener.lower() == "since" and (_SINCE_TIME.match(after) or _SINCE_ADVERB.search(before)):
            continue
        if not before:  # "Because A was late, we switched." or a bare "Because A was late."
            reason, _, main = after.partition(",")
            return main.strip(), opener, reason.strip() or None
        return before, opener, after.strip(" ,") or None
    return text, None, None


def _split_condition(text: str, openers: tuple[str, ...]) -> tuple[str, str | None]:
    for match in _opener_regex(openers).finditer(text):
        if _NOT_CONDITION_BEFORE.search(text[: match.start()]):
            continue
        before = text[: match.start()].rstrip(" ,")
        if not before:  # "If the pricing works, we'll upgrade."
            condition, comma, main = text.partition(",")
            if comma:
                return main.strip(), condition.strip()
            return "", condition.strip()
        return before, text[match.start() :].strip(" ,")
    return text, None


def _find_hedge(text: str, hedges: tuple[str, ...]) -> str | None:
    if not hedges:
        return None
    match = _opener_regex(hedges).search(text)
    return match.group(0).strip() if match else None


@cache
def _opener_regex(words: tuple[str, ...]) -> re.Pattern[str]:
    if not words:
        return re.compile(r"(?!x)x")  # a guidance without openers: nothing opens a clause
    alternation = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?:^|(?<=[\s,]))(?:{alternation})\b", re.IGNORECASE)
