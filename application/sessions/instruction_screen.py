"""`InstructionScreen`: a `SafetyFilter` that also refuses what reads as an instruction to the
agent or the system (category `prompt_injection`), as judged by an `InstructionDetector` (a
learned classifier), after the inner filter's own checks.

Such a line would otherwise come back to an agent in a later session as a note; refused, it
is withheld like a card number: never buffered, recorded or sent on, only counted. What gets
past it is still fenced as the subject's words in every prompt (`recall.notes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.sessions.learned_screen import LearnedScreen
from factledger.application.sessions.ports import InstructionDetector, SafetyFilter

INSTRUCTION = "prompt_injection"
# The head's probability from which a line is refused: a refusal loses a line of the
# conversation, so the bar is above even odds.
INSTRUCTION_MIN = 0.7


@dataclass(frozen=True, slots=True)
class InstructionScreen(LearnedScreen):
    CATEGORY = INSTRUCTION
    inner: SafetyFilter
    detector: InstructionDetector
    threshold: float = INSTRUCTION_MIN

    async def probability(self, text: str) -> float:
        (p,) = await self.detector.instruction_p([text])
        return p
