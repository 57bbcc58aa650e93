"""Whether the sentence a field reader's answer stands on states a value for that field.

A reader of fields finds words that could be a field's value; the sentence around them may
state it, state it tentatively, deny it ("We don't use any outside supplier"), ask about it,
imagine it, say it of someone else, or be small talk. An `AnswerStanceReader` reads that
sentence for the answer's field and says which (ADR 0121).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class Stance(StrEnum):
    """What the sentence does with the answer's value for its field."""

    STATES = "states"  # the subject states it as theirs
    HEDGED = "hedged"  # the subject states it tentatively: a conditioned proposal
    DENIES = "denies"  # a negation, a value given up, "none"
    ASKS = "asks"  # a question
    HYPOTHETICAL = "hypothetical"  # an intent not yet held, a maybe, an if
    THIRD_PARTY = "third_party"  # someone else's fact
    SMALL_TALK = "small_talk"  # a pleasantry or a joke
    NONE = "none"  # no value of that field (another field's words, a reply)


@dataclass(frozen=True, slots=True)
class ReaderAnswer:
    """One answer to judge: the words read as `field`'s value in `sentence`."""

    sentence: str
    value: str
    field: str
    margin: float  # the reader's score over "no value"
    many: bool  # a list field
    # The best margin another field's answer reaches on words overlapping these in the same
    # line (0: none): the reader's words read as two fields are seldom both.
    rival: float = 0.0
    best: float = 0.0  # the best margin any answer of this field reaches in the session


@dataclass(frozen=True, slots=True)
class StanceReading:
    """The stance read, the probability that the sentence states the value (tentatively or
    not), and whether the answer is kept: that probability clears the reader's bar."""

    stance: Stance
    states_p: float
    kept: bool

    @property
    def hedged(self) -> bool:
        return self.kept and self.stance is Stance.HEDGED


class AnswerStanceReader(Protocol):
    """Reads, for each answer, whether its sentence states its value for its field.

    - One `StanceReading` per answer, in order; deterministic for a given model and input.
    - A reading is `kept` when the sentence states the value (plainly or tentatively) with
      at least the reader's bar of probability; `stance` is the most probable reading.
    """

    async def read(self, answers: Sequence[ReaderAnswer]) -> list[StanceReading]: ...
