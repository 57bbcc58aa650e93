"""`RemovalConfirmationReader`: whether, in a subject's line and the agent's next line read
together, the subject asks to remove or not keep something held about them and the agent
confirms it ("ps can u drop my employer off my profile" / "Done, it's off your profile.").

The agent's line alone does not say it: "Done, Marek removed." answers a request to forget an
emergency contact as well as one to take a driver off a policy (ADRs 0206, 0207). The reader is
the packaged multilingual encoder with its upper layers tuned on labelled (customer line,
agent line) pairs (`TunedUseAnswerJudge`'s file format and numpy forward pass), its reading of
a confirmation moved on the log-odds scale so that the file's threshold (`yes_min`, chosen on
kept-out pairs: no pair that is not a confirmation read over it) reads 0.5. It lifts a sentence
of the subject's line that the forget flag already leans to ask (`application.review.
forget_requests`, ADR 0209); it never makes a request of its own. The file ships in this
package (`weights/removal-confirmation-use.npz`), its SHA-256 pinned here and checked before a
byte of it is used; `python -m factledger.bench.judgement confirmations` fits it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge

PACKAGED_REMOVAL_CONFIRMATIONS = Path(__file__).parent / "weights" / "removal-confirmation-use.npz"
PACKAGED_REMOVAL_CONFIRMATIONS_SHA256 = (
    "5c4323cddcb5b00aad3bc199354b2e97ee1988a00113195f5ba147fc639c8b07"
)


class RemovalConfirmationReader:
    def __init__(self, model: TunedUseAnswerJudge) -> None:
        self._model = model

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> RemovalConfirmationReader:
        return cls(TunedUseAnswerJudge.load(path, sha256))

    @classmethod
    def packaged(cls) -> RemovalConfirmationReader:
        """The shipped reader (ADR 0209), checked against its pin."""
        return cls.load(PACKAGED_REMOVAL_CONFIRMATIONS, PACKAGED_REMOVAL_CONFIRMATIONS_SHA256)

    async def confirmed(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        return await asyncio.to_thread(self.confirmed_sync, pairs)

    def confirmed_sync(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Each pair's probability of a confirmed removal, its threshold read as 0.5."""
        yes = self._model.probabilities_sync(list(pairs))[:, 0]
        bar = self._model.tuned.yes_min
        return [at_half(float(p), bar) for p in yes]


def at_half(p: float, bar: float) -> float:
    """`p` moved on the log-odds scale so that `bar` reads 0.5."""
    q, b = min(max(p, 1e-7), 1 - 1e-7), min(max(bar, 1e-7), 1 - 1e-7)
    z = math.log(q / (1 - q)) - math.log(b / (1 - b))
    return 1.0 / (1.0 + math.exp(-z))
