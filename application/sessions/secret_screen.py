"""`SecretScreen`: a `SafetyFilter` that also refuses what a `SecretDetector` (a learned
classifier) reads as disclosing a secret, as `credential`, after the inner filter's own
checks (ADR 0185).

The detectors find secrets by their formats and by a credential word in English; a PIN, a
gate code or a banking login said in another language or other words reaches the classifier
only. Refused, it is withheld like any credential: never buffered, recorded or sent on, only
counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from factledger.application.sessions.learned_screen import LearnedScreen
from factledger.application.sessions.ports import SafetyFilter, SecretDetector

CREDENTIAL = "credential"
# The head's probability from which a message is refused: a refusal loses the subject's
# message whole, so the bar is well above even odds (ADR 0185).
SECRET_MIN = 0.9


@dataclass(frozen=True, slots=True)
class SecretScreen(LearnedScreen):
    CATEGORY = CREDENTIAL
    inner: SafetyFilter
    detector: SecretDetector
    threshold: float = SECRET_MIN

    async def probability(self, text: str) -> float:
        (p,) = await self.detector.secret_p([text])
        return p
