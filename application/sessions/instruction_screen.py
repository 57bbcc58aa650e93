"""`InstructionScreen`: a `SafetyFilter` that also refuses what reads as an instruction to the
agent or the system (category `prompt_injection`), as judged by an `InstructionDetector` (a
learned classifier), after the inner filter's own checks.

Such a line would otherwise come back to an agent in a later session as a note; refused, it
is withheld like a card number: never buffered, recorded or sent on, only counted. What gets
past it is still fenced as the subject's words in every prompt (`recall.notes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.sessions.ports import InstructionDetector, SafetyFilter
from factledger.application.sessions.types import SafetyVerdict
from factledger.domain.transcript import Message

INSTRUCTION = "prompt_injection"
# The head's probability from which a line is refused: a refusal loses a line of the
# conversation, so the bar is above even odds.
INSTRUCTION_MIN = 0.7


@dataclass(frozen=True, slots=True)
class InstructionScreen:
    inner: SafetyFilter
    detector: InstructionDetector
    threshold: float = INSTRUCTION_MIN

    async def screen(self, message: Message) -> SafetyVerdict:
        verdict = await self.inner.screen(message)
        if not verdict.allowed:
            return verdict
        (p,) = await self.detector.instruction_p([message.text])
        if p >= self.threshold:
            return SafetyVerdict(allowed=False, category=INSTRUCTION)
        return verdict
