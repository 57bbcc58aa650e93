"""`PairAnswerJudge`: whether a reply is a yes, a no or neither to the question it answers.

It reads the question and the reply together. Both are embedded by the multilingual
encoder (`UseMultilingualEmbedder`: one space for sixteen languages, trained on
question-answer pairs), and one learned head (a multinomial logistic regression) reads the
reply's vector, its element-wise product and distance with the question's, and the reply's
hashed character n-grams (the short words of any language: "ja", "nee", "não", "k"). A
reply alone cannot tell a yes to this question from a yes to another, or a yes that corrects
the value; the pair can.

The head's file (a `Heads` file holding one head, "answer") names the encoder it was
trained over and the smallest probability of a yes that confirms (`yes_min`, chosen out of
fold so that no training reply that is not a yes reads as one); its SHA-256 is checked
before a byte of it is used. `python -m factledger.bench.judgement answers` trains it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.features import Matrix, char_ngrams
from factledger.adapters.judgement.heads import Heads
from factledger.application.judgement.types import Reply
from factledger.application.memory.ports import Embedder

HEAD = "answer"
CLASSES = (Reply.YES.value, Reply.NO.value, Reply.NEITHER.value)
PACKAGED_ANSWER_HEAD = Path(__file__).parent / "weights" / "answer-pair-head.npz"
PACKAGED_ANSWER_HEAD_SHA256 = "a2cd6dbd3bee7a2b4487cd32bbfd656aac8e595e2c62acf642dd4b140f1cbedf"


class AnswerEncoderMismatchError(ValueError):
    """The answer head was trained over another encoder's vectors."""


def pair_features(questions: Matrix, replies: Matrix, texts: Sequence[str], buckets: int) -> Matrix:
    """One row per (question, reply): the reply's vector, its product and absolute
    difference with the question's, then the reply's character n-grams."""
    return np.hstack(
        [
            replies,
            questions * replies,
            np.abs(questions - replies),
            char_ngrams(texts, buckets),
        ]
    ).astype(np.float32)


async def embed_pairs(embedder: Embedder, pairs: Sequence[tuple[str, str]], buckets: int) -> Matrix:
    """The features of each pair, each distinct question embedded once."""
    questions = sorted({q for q, _ in pairs})
    replies = [r for _, r in pairs]
    vectors = await embedder.embed([*replies, *questions])
    by_question = dict(zip(questions, vectors[len(replies) :], strict=True))
    asked = np.stack([by_question[q] for q, _ in pairs]).astype(np.float32)
    return pair_features(asked, vectors[: len(replies)].astype(np.float32), replies, buckets)


@dataclass(frozen=True, slots=True)
class PairAnswerJudge:
    embedder: Embedder
    heads: Heads

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise AnswerEncoderMismatchError(
                f"the answer head needs the encoder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def load(cls, embedder: Embedder, path: Path, sha256: str | None) -> PairAnswerJudge:
        return cls(embedder, Heads.load(path, sha256, (HEAD,)))

    @classmethod
    def load_over_packaged_encoder(cls, path: Path, sha256: str | None) -> PairAnswerJudge:
        """A head file (checked against `sha256` first) over the packaged multilingual
        encoder. The encoder's files are checked against their pins when it loads, on first
        use (in a worker thread), so a start neither waits for the load nor reads its 32 MB
        twice: hashing them here was a twentieth of a start's CPU, and the load checks them
        again anyway. Files that differ from their pins fail every answer
        (`UseIntegrityError`) instead of the construction."""
        heads = Heads.load(path, sha256, (HEAD,))
        embedder = UseMultilingualEmbedder()
        if heads.model_id != embedder.model_id:
            raise AnswerEncoderMismatchError(f"the answer head needs the encoder {heads.model_id}")
        return cls(embedder, heads)

    @classmethod
    def packaged(cls) -> PairAnswerJudge:
        """The shipped head over the packaged multilingual encoder (both checked)."""
        return cls.load_over_packaged_encoder(PACKAGED_ANSWER_HEAD, PACKAGED_ANSWER_HEAD_SHA256)

    async def probabilities(self, pairs: Sequence[tuple[str, str]]) -> Matrix:
        """Each pair's probabilities, in the order yes, no, neither."""
        head = self.heads[HEAD]
        p = head.probabilities(await embed_pairs(self.embedder, pairs, self.heads.buckets))
        ordered: Matrix = p[:, [head.column(c) for c in CLASSES]]
        return ordered

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """A yes only when the head is sure enough of it (`yes_min`): a false yes records a
        fact the subject did not confirm, a missed one only leaves it pending. A reply whose
        likeliest reading is a yes, but not a sure one, is neither: read as a no it would
        decline the change the subject most likely confirmed."""
        if not pairs:
            return []
        out = []
        for yes, no, neither in await self.probabilities(pairs):
            if yes >= max(no, neither):
                out.append(Reply.YES if yes >= self.heads.yes_min else Reply.NEITHER)
            else:
                out.append(Reply.NO if no >= neither else Reply.NEITHER)
        return out
