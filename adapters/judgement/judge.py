"""`LearnedJudge`: the `SentenceJudge` port over the packaged embedder and learned heads.

The heads were trained over one embedder model's vectors (the file names it); the judge
refuses another. Nothing is fetched: the embedder's model ships in a pinned package, the
heads in this package (`weights/`), each checked against its pinned SHA-256.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.fields import (
    clauses_of,
    field_probabilities,
    field_text,
    pair_features,
)
from factledger.adapters.judgement.heads import Heads
from factledger.application.judgement.types import FieldStatement, Judgement, Reply, Statement
from factledger.application.memory.ports import Embedder
from factledger.domain.transcript import Message, Role

PACKAGED_HEADS = Path(__file__).parent / "weights" / "judgement-heads.npz"
PACKAGED_HEADS_SHA256 = "0938bda9d270344bb9ce8a34cc89b13cd564b1b8c1df74046586c50ae31d504c"
FLAG_MIN = 0.5  # a flag head's probability from which the flag is set


class EmbedderMismatchError(ValueError):
    """The heads were trained over another embedder model's vectors."""


@dataclass(frozen=True, slots=True)
class LearnedJudge:
    embedder: Embedder
    heads: Heads

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise EmbedderMismatchError(
                f"judgement heads need the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def packaged(cls, *, cache_dir: Path | None = None) -> LearnedJudge:
        """The shipped heads over the packaged default embedder they were trained on."""
        return cls.from_file(PACKAGED_HEADS, PACKAGED_HEADS_SHA256, cache_dir=cache_dir)

    @classmethod
    def from_file(
        cls, path: Path, sha256: str | None, *, cache_dir: Path | None = None
    ) -> LearnedJudge:
        """Heads from `path` (checked against `sha256`) over the packaged default embedder;
        `cache_dir` keeps its compiled graph between starts (None: compiled every start)."""
        heads = Heads.load(path, sha256)
        embedder = OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET), cache_dir=cache_dir)
        return cls(embedder, heads)

    async def _features(self, texts: Sequence[str]) -> Matrix:
        vectors = await self.embedder.embed(list(texts))
        return features(vectors, texts, self.heads.buckets)

    def _flag(self, name: str, x: Matrix) -> Matrix:
        head = self.heads[name]
        p: Matrix = head.probabilities(x)[:, head.column("true")]
        return p

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        if not sentences:
            return []
        x = await self._features(sentences)
        statement = self.heads["statement"]
        kinds = statement.probabilities(x)
        hedged, forget, correction = (self._flag(n, x) for n in ("hedged", "forget", "correction"))
        out = []
        for i in range(len(sentences)):
            best = int(np.argmax(kinds[i]))
            out.append(
                Judgement(
                    statement=Statement(statement.classes[best]),
                    statement_p=float(kinds[i, best]),
                    hedged=bool(hedged[i] >= FLAG_MIN),
                    forget_request=bool(forget[i] >= FLAG_MIN),
                    correction=bool(correction[i] >= FLAG_MIN),
                    forget_p=float(forget[i]),
                    hedged_p=float(hedged[i]),
                    correction_p=float(correction[i]),
                )
            )
        return out

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """A yes only when the head is sure enough of it (`yes_min`): a false yes records a
        fact the subject did not confirm, a missed one only leaves it pending."""
        if not pairs:
            return []
        x = await self._features([reply for _, reply in pairs])
        head = self.heads["answer"]
        p = head.probabilities(x)
        yes, no, neither = (head.column(c) for c in ("yes", "no", "neither"))
        out = []
        for row in p:
            if row[yes] >= self.heads.yes_min and row[yes] >= max(row[no], row[neither]):
                out.append(Reply.YES)
            else:
                out.append(Reply.NO if row[no] >= row[neither] else Reply.NEITHER)
        return out

    async def pairs(
        self, transcript: Sequence[Message], fields: Sequence[str]
    ) -> tuple[list[tuple[int, str]], Matrix]:
        """The subject's clauses (message index, clause) and the features of every (clause,
        field) pair, as the field head reads them (the lab trains it on the same)."""
        said: list[tuple[int, str]] = []
        asked: list[str] = []
        for i, message in enumerate(transcript):
            if message.role is not Role.SUBJECT:
                continue
            before = transcript[i - 1] if i > 0 else None
            question = before.text if before is not None and before.role is not Role.SUBJECT else ""
            for clause in clauses_of(message.text):
                said.append((i, clause))
                asked.append(question)
        if not said or not fields:
            return said, np.zeros((len(said), len(fields), 0), dtype=np.float32)
        texts = [c for _, c in said]
        questions = sorted({q for q in asked if q})
        vectors = await self.embedder.embed([*texts, *questions, *(field_text(f) for f in fields)])
        clause_vecs = vectors[: len(texts)]
        by_question = dict(
            zip(questions, vectors[len(texts) : len(texts) + len(questions)], strict=True)
        )
        field_vecs = vectors[len(texts) + len(questions) :]
        zero = np.zeros(vectors.shape[1], dtype=np.float32)
        question_vecs = np.stack([by_question.get(q, zero) for q in asked])
        has_question = np.array([1.0 if q else 0.0 for q in asked], dtype=np.float32)
        x = features(clause_vecs, texts, self.heads.buckets)
        statement_p = self.heads["statement"].probabilities(x)
        forget_p = self._flag("forget", x)
        return said, pair_features(
            texts, clause_vecs, question_vecs, has_question, field_vecs, statement_p, forget_p
        )

    async def field_statements(
        self, transcript: Sequence[Message], fields: Sequence[str]
    ) -> list[FieldStatement]:
        said, pairs = await self.pairs(transcript, fields)
        if not said or not fields:
            return []
        head = self.heads["field"]
        p = field_probabilities(head.weights, head.bias, pairs)
        n, f = p.shape
        return [
            FieldStatement(said[c][0], said[c][1], fields[k], float(p[c, k]))
            for c in range(n)
            for k in range(f)
            if p[c, k] >= self.heads.field_min
        ]

    async def field_of(self, sentence: str, fields: Sequence[str]) -> tuple[str, float] | None:
        if not fields or not sentence.strip():
            return None
        said, pairs = await self.pairs([Message(Role.SUBJECT, sentence)], fields)
        if not said:
            return None
        head = self.heads["field"]
        p = field_probabilities(head.weights, head.bias, pairs)
        # The sentence's best clause for each field: a request may sit in one of several.
        best = p.max(axis=0)
        k = int(np.argmax(best))
        return fields[k], float(best[k])
