"""`LearnedScreen`: what a screen does around a learned classifier of a message (an
instruction to the agent, a secret): the inner filter's checks first, its refusal standing as
it is; then a message the classifier reads at the screen's threshold or above is refused under
the screen's category."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from factledger.application.sessions.types import SafetyVerdict
from factledger.domain.transcript import Message

if TYPE_CHECKING:
    from factledger.application.sessions.ports import SafetyFilter


class LearnedScreen:
    __slots__ = ()
    CATEGORY: ClassVar[str]
    inner: SafetyFilter
    threshold: float

    async def probability(self, text: str) -> float:
        """The classifier's probability that `text` is what the screen refuses."""
        raise NotImplementedError

    async def screen(self, message: Message) -> SafetyVerdict:
        verdict = await self.inner.screen(message)
        if not verdict.allowed:
            return verdict
        if await self.probability(message.text) >= self.threshold:
            return SafetyVerdict(allowed=False, category=self.CATEGORY)
        return verdict
