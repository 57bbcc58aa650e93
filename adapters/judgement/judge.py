"""`LearnedJudge`: the `SentenceJudge` port over the packaged embedder and learned heads.

The heads were trained over one embedder model's vectors (the file names it); the judge
refuses another. Nothing is fetched: the embedder's model ships in a pinned package, the
heads in this package (`weights/`), each checked against its pinned SHA-256. Replies to a
confirmation question are read by a pair reader (the question and the reply together) when
the judge has one: the packaged judge's is the multilingual encoder with its upper layers
fine-tuned on labelled pairs (`tuned_use.py`, ADR 0105); a deployment may bring a pair head
(`pair_answers.py`) or a cross-encoder (`cross_answers.py`). A yes needs the heads' own
answer head (the reply alone) to be sure too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import structlog

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.embedding.onnx.token_states import TokenStates
from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.fields import (
    clauses_of,
    field_probabilities,
    field_text,
    pair_features,
)
from factledger.adapters.judgement.forget_reader import (
    EitherReader,
    ForgetReaderIntegrityError,
    RequestReader,
)
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.spans import (
    LineReading,
    TokenStatesReader,
    read_line,
    sentence_starts,
    span_scores,
    spans_of,
)
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.errors import ModelUnavailableError
from factledger.application.judgement.types import FieldStatement, Judgement, Reply, Statement
from factledger.application.memory.ports import Embedder
from factledger.domain.transcript import Message, Role

log = structlog.get_logger(__name__)

PACKAGED_HEADS = Path(__file__).parent / "weights" / "judgement-heads.npz"
PACKAGED_HEADS_SHA256 = "b8e650d0a19a2c9f86344add6adc180611f7a05b99f1b5c0b72b24ef40c67210"
FLAG_MIN = 0.5  # a flag head's probability from which the flag is set


def _per_token(
    text: str, tokens: TokenStates, clauses: Sequence[tuple[str, Matrix]], fields: int
) -> Matrix:
    """Each token's clause's field probabilities (zeros for a token in no clause)."""
    out = np.zeros((len(tokens.words), fields), dtype=np.float32)
    cursor = 0
    for clause, p in clauses:
        start = text.find(clause, cursor)
        if start < 0:
            continue
        end = cursor = start + len(clause)
        inside = (tokens.offsets[:, 0] < end) & (tokens.offsets[:, 1] > start)
        out[inside] = p
    return out


class AnswerReader(Protocol):
    """A reader of replies to a confirmation question, each with its question (the pair
    head, `pair_answers.py`, or the cross-encoder, `cross_answers.py`)."""

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]: ...


class EmbedderMismatchError(ValueError):
    """The heads were trained over another embedder model's vectors."""


@dataclass(frozen=True, slots=True)
class LearnedJudge:
    embedder: Embedder
    heads: Heads
    pair_answers: AnswerReader | None = None
    # Whether a yes of `pair_answers` needs the reply-only head's yes too (ADR 0080, 0087:
    # each pair reader tried, the cross-encoder too, let through replies that head refused).
    reply_head_agrees: bool = True
    # Fine-tuned readers that decide, among the sentences the forget flag passes at their
    # gates, which ask to forget (ADR 0165, 0173); None: the flag alone, at `forget_min`.
    forget_reader: RequestReader | None = None

    def __post_init__(self) -> None:
        if self.embedder.model_id != self.heads.model_id:
            raise EmbedderMismatchError(
                f"judgement heads need the embedder {self.heads.model_id}, "
                f"not {self.embedder.model_id}"
            )

    @classmethod
    def packaged(cls, *, cache_dir: Path | None = None) -> LearnedJudge:
        """The shipped heads over the packaged default embedder they were trained on, the
        shipped reader of replies (the tuned multilingual encoder) and the shipped readers of
        requests to forget beside the heads' flag (ADR 0166, 0173)."""
        return cls.from_file(
            PACKAGED_HEADS,
            PACKAGED_HEADS_SHA256,
            cache_dir=cache_dir,
            answers=TunedUseAnswerJudge.packaged(),
            forget_reader=EitherReader.packaged(),
        )

    @classmethod
    def from_file(
        cls,
        path: Path,
        sha256: str | None,
        *,
        cache_dir: Path | None = None,
        answers: AnswerReader | None = None,
        reply_head_agrees: bool = True,
        forget_reader: RequestReader | None = None,
    ) -> LearnedJudge:
        """Heads from `path` (checked against `sha256`) over the packaged default embedder;
        `cache_dir` keeps its compiled graph between starts (None: compiled every start);
        `answers` reads replies to confirmation questions (None: the heads' answer head)."""
        heads = Heads.load(path, sha256)
        # The model loads on a thread; the first judgement waits for it.
        embedder = OnnxEmbedder(
            OnnxModelFiles.preset(DEFAULT_PRESET), cache_dir=cache_dir, load_in_background=True
        )
        return cls(embedder, heads, answers, reply_head_agrees, forget_reader)

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
        requests = await self._requests(sentences, forget)
        out = []
        for i in range(len(sentences)):
            best = int(np.argmax(kinds[i]))
            out.append(
                Judgement(
                    statement=Statement(statement.classes[best]),
                    statement_p=float(kinds[i, best]),
                    hedged=bool(hedged[i] >= FLAG_MIN),
                    forget_request=requests[i],
                    correction=bool(correction[i] >= FLAG_MIN),
                    forget_p=float(forget[i]),
                    hedged_p=float(hedged[i]),
                    correction_p=float(correction[i]),
                )
            )
        return out

    async def _requests(self, sentences: Sequence[str], forget: Matrix) -> list[bool]:
        """Which sentences ask to forget: the reader's reading where there is one, else (or
        when its file cannot be used: logged) the flag's at `forget_min`. The reader only
        makes the flag more precise (ADR 0166), so its loss costs false alarms, not requests."""
        if self.forget_reader is not None:
            try:
                return await self.forget_reader.requests(sentences, [float(p) for p in forget])
            except (ForgetReaderIntegrityError, ModelUnavailableError) as exc:
                # A load that failed names its own error: the file, or what the disk said.
                cause = exc.__cause__ if isinstance(exc, ModelUnavailableError) else exc
                log.error("forget_reader_unavailable", error_type=type(cause or exc).__name__)
        return [bool(p >= self.heads.forget_min) for p in forget]

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """A yes only when the head is sure enough of it (`yes_min`): a false yes records a
        fact the subject did not confirm, a missed one only leaves it pending.

        With a pair judge (the pair head, or a deployment's cross-encoder), a yes needs both
        readings: the pair judge's (question and reply) and the reply-only head's, each sure
        by its own threshold. Either alone let through
        replies the other caught (a yes to another question read as sure from the reply; a
        bare "ok" after a question that was not a yes/no one read as sure from the pair), and
        a yes that only one of them is sure of leaves the change pending. Otherwise the pair
        judge's reading (a no declines, anything else is neither)."""
        if self.pair_answers is None:
            return await self.reply_answers(pairs)
        paired = await self.pair_answers.answers(pairs)
        if Reply.YES not in paired or not self.reply_head_agrees:
            return paired
        alone = await self.reply_answers(pairs)
        return [
            Reply.NEITHER if p is Reply.YES and a is not Reply.YES else p
            for p, a in zip(paired, alone, strict=True)
        ]

    async def reply_answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """The heads' own answer head, which reads the reply alone."""
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

    async def line_readings(
        self, transcript: Sequence[Message], fields: Sequence[str]
    ) -> list[tuple[int, TokenStates, LineReading]]:
        """Each subject line's tokens as the span tagger reads them (message index, token
        states, reading), each line in the context of the agent's question before it; the lab
        trains the tagger on the same."""
        if not isinstance(self.embedder, TokenStatesReader):
            raise TypeError("the span tagger needs an embedder that gives token states")
        lines: list[tuple[int, str, str | None]] = []
        for i, message in enumerate(transcript):
            if message.role is not Role.SUBJECT or not message.text.strip():
                continue
            before = transcript[i - 1] if i > 0 else None
            asked = before.text if before is not None and before.role is not Role.SUBJECT else None
            lines.append((i, message.text, asked or None))
        if not lines or not fields:
            return []
        sentences = [
            [
                text[a:b].strip() or text
                for a, b in zip(starts, [*starts[1:], len(text)], strict=False)
            ]
            for _, text, _ in lines
            for starts in [sentence_starts(text)]
        ]
        flat = [s for group in sentences for s in group]
        x = await self._features(flat)
        per_sentence = np.hstack(
            [
                self.heads["statement"].probabilities(x),
                self._flag("forget", x)[:, None],
                self._flag("hedged", x)[:, None],
            ]
        )
        questions = sorted({q for _, _, q in lines if q})
        texts = [t for _, t, _ in lines]
        vectors = await self.embedder.embed([*texts, *questions, *(field_text(f) for f in fields)])
        by_question = dict(
            zip(questions, vectors[len(texts) : len(texts) + len(questions)], strict=False)
        )
        field_vecs = vectors[len(texts) + len(questions) :]
        states = await self.embedder.token_states([(t, q) for _, t, q in lines])
        clause_p = await self._clause_probabilities(transcript, fields)
        out = []
        row = 0
        for n, ((index, text, asked), tokens) in enumerate(zip(lines, states, strict=True)):
            count = len(sentences[n])
            reading = read_line(
                text,
                tokens,
                field_vecs,
                vectors[n],
                by_question.get(asked) if asked else None,
                per_sentence[row : row + count],
                _per_token(text, tokens, clause_p.get(index, []), len(fields)),
            )
            row += count
            out.append((index, tokens, reading))
        return out

    async def _clause_probabilities(
        self, transcript: Sequence[Message], fields: Sequence[str]
    ) -> dict[int, list[tuple[str, Matrix]]]:
        """Per subject message, its clauses and the field head's probabilities for each."""
        said, pairs = await self.pairs(transcript, fields)
        out: dict[int, list[tuple[str, Matrix]]] = {}
        if not said:
            return out
        head = self.heads["field"]
        p = field_probabilities(head.weights, head.bias, pairs)
        for c, (index, clause) in enumerate(said):
            out.setdefault(index, []).append((clause, p[c]))
        return out

    async def value_spans(
        self, transcript: Sequence[Message], fields: Sequence[str], *, every: bool = False
    ) -> list[FieldStatement]:
        """The words of the subject's lines that state a field's value, by the span tagger."""
        head = self.heads["span"]
        out = []
        for index, tokens, reading in await self.line_readings(transcript, fields):
            p = span_scores(head.weights, head.bias, reading)
            text = transcript[index].text
            for span in spans_of(text, p, tokens, self.heads.token_min):
                if every or span.p >= self.heads.span_min:
                    words = text[span.start : span.end]
                    out.append(FieldStatement(index, words, fields[span.field], span.p))
        return out

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]:
        """The clauses the field head reads as stating a field (list and held fields at the
        same bar);
        when the heads say so (`span_values`), each narrowed to the words the span tagger
        gives that field inside the clause (the value), the clause kept where it tags none. On
        the blind dev half the narrowing lost more matches than it made (the tagger's span
        often leaves out words of the value), so the trained file does not set it by
        default."""
        clauses = await self.clause_statements(transcript, fields)
        if not self.heads.span_values or not isinstance(self.embedder, TokenStatesReader):
            return clauses
        spans = await self.value_spans(transcript, fields, every=True)
        out = []
        for c in clauses:
            inside = [
                v
                for v in spans
                if v.message_index == c.message_index
                and v.field == c.field
                and v.clause in c.clause
            ]
            best = max(inside, key=lambda v: v.p, default=None)
            out.append(c if best is None else replace(c, clause=best.clause))
        return out

    async def clause_statements(
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

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        vectors = np.asarray(await self.embedder.embed([sentence, *texts]), dtype=np.float32)
        return [float(v) for v in vectors[1:] @ vectors[0]]  # the embedder's are unit vectors
