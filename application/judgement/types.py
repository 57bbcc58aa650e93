"""The judgements a `SentenceJudge` makes, as values.

A `Judgement` is about one sentence a subject said: whom or what it is about, whether it is
tentative, whether it asks to forget something, whether it corrects or changes something said
before. A `Reply` is what a subject's answer to a confirmation question says of that change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Statement(StrEnum):
    """Whom or what a sentence is about."""

    SELF = "self"  # a fact about the speaker (or their own organisation, household)
    THIRD_PARTY = "third_party"  # a fact about someone else (a spouse, a colleague, a friend)
    SMALL_TALK = "small_talk"  # weather, greetings, jokes, thanks: no fact to keep
    QUESTION = "question"  # the speaker asks something


class Reply(StrEnum):
    """What an answer to "is this right?" says of the change asked about."""

    YES = "yes"  # confirms this change, as asked
    NO = "no"  # denies it, or says the value is another one
    NEITHER = "neither"  # unsure, deflects, answers something else


@dataclass(frozen=True, slots=True)
class Judgement:
    """One sentence's judgement; each probability is the head's, in [0, 1]."""

    statement: Statement
    statement_p: float
    hedged: bool
    forget_request: bool
    correction: bool
    forget_p: float = 0.0
    hedged_p: float = 0.0
    correction_p: float = 0.0

    @property
    def is_fact_about_subject(self) -> bool:
        return self.statement is Statement.SELF and not self.forget_request


@dataclass(frozen=True, slots=True)
class FieldStatement:
    """A clause of a subject's message that states a profile field, by the judge's reading."""

    message_index: int
    clause: str  # as said, a substring of the message
    field: str
    p: float
