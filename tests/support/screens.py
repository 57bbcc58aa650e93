"""A stand-in safety filter for the lab's screen scorers: it refuses, as a credential, the
messages that hold one of its words."""

from __future__ import annotations

from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.domain.transcript import Message


class RefusesNaming:
    def __init__(self, *words: str) -> None:
        self.words = words

    async def screen(self, message: Message) -> SafetyVerdict:
        if any(w in message.text for w in self.words):
            return SafetyVerdict(allowed=False, category="credential")
        return ALLOWED
