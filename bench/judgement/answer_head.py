"""`LearnedAnswerHead`, a candidate answer head (tried, not shipped): whether a subject's reply
to a confirmation question is a yes, a no or neither, as one learned head (a multinomial
logistic regression) over the packaged sentence embedder. The product reads replies with the
answer head of its judgement heads file; this one lives in the lab until it does better on the
blind sets (`docs/benchmarks.md`, "Answers and instructions, second blind set").

It reads the reply whole and its opening (the words before the first punctuation mark, at
most `OPENING_WORDS`) side by side, each as an embedding and hashed character n-grams: people
answer first and then chat ("yes, since March, and the kids love it"), and a reply in another
language is still read by its short words ("ja", "nee", "não"). Its file holds the smallest
probability of a yes that confirms (`yes_min`, chosen out of fold so that no training reply
that is not a yes reads as one); it is trained by
`python -m factledger.bench.judgement answers --out FILE`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import Matrix, char_ngrams
from factledger.adapters.judgement.heads import Heads
from factledger.application.judgement.types import Reply
from factledger.application.memory.ports import Embedder

HEAD = "answer"
OPENING_WORDS = 6
_PAUSE = re.compile(r"[.,!?;:\u2026\u2014\u2013]|\s-\s")


class AnswerEmbedderMismatchError(ValueError):
    """The answer head was trained over another embedder model's vectors."""


def opening_of(reply: str) -> str:
    """The reply's first words: up to its first punctuation mark, at most `OPENING_WORDS`."""
    first = next((piece for piece in _PAUSE.split(reply) if piece.strip()), reply)
    return " ".join(first.split()[:OPENING_WORDS])


async def reply_features(embedder: Embedder, replies: Sequence[str], buckets: int) -> Matrix:
    """One row per reply, as the answer head reads it: the whole reply's embedding and
    n-grams, then its opening's."""
    openings = [opening_of(r) for r in replies]
    vectors = await embedder.embed([*replies, *openings])
    whole, first = vectors[: len(replies)], vectors[len(replies) :]
    return np.hstack(
        [
            whole.astype(np.float32),
            char_ngrams(replies, buckets),
            first.astype(np.float32),
            char_ngrams(openings, buckets),
        ]
    )


@dataclass(frozen=True, slots=True)
class LearnedAnswerHead:
    embedder: Embedder
    heads: Heads

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise AnswerEmbedderMismatchError(
                f"the answer head needs the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def load(cls, embedder: Embedder, path: Path, sha256: str | None) -> LearnedAnswerHead:
        return cls(embedder, Heads.load(path, sha256, (HEAD,)))

    async def yes_p(self, replies: Sequence[str]) -> Matrix:
        """Each reply's probabilities, in the order yes, no, neither."""
        head = self.heads[HEAD]
        p = head.probabilities(await reply_features(self.embedder, replies, self.heads.buckets))
        order = [head.column(c) for c in (Reply.YES, Reply.NO, Reply.NEITHER)]
        ordered: Matrix = p[:, order]
        return ordered

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """A yes only when the head is sure enough of it (`yes_min`): a false yes records a
        fact the subject did not confirm, a missed one only leaves it pending."""
        if not pairs:
            return []
        p = await self.yes_p([reply for _, reply in pairs])
        out = []
        for yes, no, neither in p:
            if yes >= self.heads.yes_min and yes >= max(no, neither):
                out.append(Reply.YES)
            else:
                out.append(Reply.NO if no >= neither else Reply.NEITHER)
        return out
