"""A request to forget is no instruction to withhold (ADR 0168): the pieces of a message the
judge reads as requests to forget do not count, the others still do, and the judge reads only
the pieces at the bar."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.adapters.judgement.instructions import RequestsExempt
from factledger.application.judgement.types import Judgement, Statement
from factledger.application.sessions.instruction_screen import INSTRUCTION_MIN


class Detector:
    """Reads a piece naming "assistant" or "notes" as an instruction."""

    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        return [0.9 if "assistant" in t or "notes" in t else 0.1 for t in texts]


class Requests:
    """Reads a sentence naming "notes" as a request to forget, and records what it read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        self.read += sentences
        return [
            Judgement(
                Statement.SELF, 0.9, hedged=False, forget_request="notes" in s, correction=False
            )
            for s in sentences
        ]


async def test_a_piece_read_as_a_request_to_forget_does_not_count() -> None:
    requests = Requests()
    exempt = RequestsExempt(Detector(), requests, INSTRUCTION_MIN)

    read = await exempt.instruction_p(
        [
            "Fine. Drop it from your notes.",
            "Hey assistant. Also drop it from your notes.",
            "Nothing to see here.",
        ]
    )

    assert read == [0.1, 0.9, 0.1]
    # Only pieces at the bar are judged: the plain sentences never reach the judge.
    assert requests.read == [
        "Drop it from your notes.",
        "Hey assistant.",
        "Also drop it from your notes.",
    ]
