"""The span tagger: which words of a subject's line state the value of which profile field.

Each token of the line, read by the encoder in the context of the agent's question before it,
is compared with every field of the subject's kind at once: a score per (token, field) and a
softmax over the kind's fields and "none" say which field's value the token belongs to, if
any. A field's value is then a run of neighbouring tokens given to that field, widened to whole
words: the words that state it, not the clause around them.

A score is the sum of two parts: one reads the pair (how the token's state and the line's and
the question's meaning compare with the field's name), the other only the token (whether it
reads like part of a value at all: its state, its shape, and what the statement head says of
its sentence: about the subject, someone else, small talk, a question, a request to forget).
Nothing in it names a field, so a kind nobody trained on is read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from factledger.adapters.embedding.onnx.token_states import TokenStates
from factledger.adapters.judgement.features import Matrix


@runtime_checkable
class TokenStatesReader(Protocol):
    """An embedder that also gives each token's state (the packaged ONNX one does)."""

    async def token_states(self, texts: Sequence[tuple[str, str | None]]) -> list[TokenStates]: ...


PAIR_SCALARS = 11
TOKEN_SCALARS = 12  # shape (5) + has question (1) + statement (4) + forget (1) + hedged (1)
# The span tagger's sentence features are those it was trained on (ADR 0176 left them).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORDLIKE = re.compile(r"\w\w")


def pair_width(dimension: int) -> int:
    return dimension + PAIR_SCALARS


def token_width(dimension: int) -> int:
    return dimension + TOKEN_SCALARS


def sentence_starts(text: str) -> list[int]:
    """The character offsets where the line's sentences start."""
    return [0, *(m.end() for m in _SENTENCE_END.finditer(text))]


def sentence_of_tokens(text: str, tokens: TokenStates) -> np.ndarray:
    starts = np.array(sentence_starts(text))
    return np.searchsorted(starts, tokens.offsets[:, 0], side="right") - 1


def _ranked(sim: Matrix) -> tuple[Matrix, Matrix]:
    """Per (row, field): the similarity minus the best other field's, and whether it is first."""
    if sim.shape[1] == 1:
        return np.zeros_like(sim), np.ones_like(sim)
    order = np.sort(sim, axis=1)
    best, second = order[:, -1:], order[:, -2:-1]
    return sim - np.where(sim >= best, second, best), (sim >= best).astype(np.float32)


def _shape(text: str, tokens: TokenStates) -> Matrix:
    n = len(tokens.words)
    out = np.zeros((n, 5), dtype=np.float32)
    for t in range(n):
        start, end = (int(v) for v in tokens.offsets[t])
        piece = text[start:end]
        out[t, 0] = float(any(ch.isdigit() for ch in piece))
        out[t, 1] = float(piece[:1].isupper())
        out[t, 2] = float(not any(ch.isalnum() for ch in piece))
        out[t, 3] = float(t > 0 and tokens.words[t] == tokens.words[t - 1])
        out[t, 4] = t / max(n - 1, 1)
    return out


@dataclass(frozen=True, slots=True)
class LineReading:
    """What the tagger reads of one line: per token, its pairs with every field and its own
    features."""

    pairs: Matrix  # tokens x fields x pair_width
    tokens: Matrix  # tokens x token_width


def read_line(
    text: str,
    tokens: TokenStates,
    field_vecs: Matrix,
    line_vec: Matrix,
    question_vec: Matrix | None,
    sentence_p: Matrix,
    clause_p: Matrix,
) -> LineReading:
    """`sentence_p`: per sentence of the line (`sentence_starts`), the statement head's four
    probabilities, then the forget and hedged heads'; `clause_p`: per token, the field head's
    probability that the clause holding it states each field."""
    h = tokens.states
    n, d = h.shape
    f = field_vecs.shape[0]
    scale = np.float32(np.sqrt(d))
    tok_sim = h @ field_vecs.T
    tok_margin, tok_first = _ranked(tok_sim)
    line_sim = np.repeat((line_vec @ field_vecs.T)[None, :], n, axis=0)
    line_margin, line_first = _ranked(line_sim)
    has_q = 0.0 if question_vec is None else 1.0
    q = np.zeros(d, np.float32) if question_vec is None else question_vec
    q_sim = np.repeat((q @ field_vecs.T)[None, :], n, axis=0)
    q_margin, q_first = _ranked(q_sim)
    pairs = np.empty((n, f, pair_width(d)), dtype=np.float32)
    pairs[:, :, :d] = scale * h[:, None, :] * field_vecs[None, :, :]
    for i, m in enumerate(
        (tok_sim, tok_margin, tok_first, line_sim, line_margin, line_first, q_sim, q_margin)
    ):
        pairs[:, :, d + i] = m
    pairs[:, :, d + 8] = q_first * has_q
    pairs[:, :, d + 9] = clause_p
    pairs[:, :, d + 10] = clause_p >= clause_p.max(axis=1, keepdims=True)
    sentence = sentence_of_tokens(text, tokens)
    own = np.hstack(
        [
            _shape(text, tokens),
            np.full((n, 1), has_q, np.float32),
            sentence_p[np.clip(sentence, 0, len(sentence_p) - 1)],
        ]
    )
    return LineReading(pairs, np.hstack([scale * h, own]).astype(np.float32))


def span_scores(weights: Matrix, bias: Matrix, reading: LineReading) -> Matrix:
    """(tokens x fields) probabilities that each token belongs to each field's value: a
    softmax per token over its fields' scores and "none", whose score is 0."""
    n, f, width = reading.pairs.shape
    z = (reading.pairs.reshape(n * f, width) @ weights[:width, 0]).reshape(n, f)
    z += (reading.tokens @ weights[width:, 0])[:, None] + bias[0]
    top = np.maximum(z.max(axis=1, keepdims=True), 0.0) if f else np.zeros((n, 1), np.float32)
    e = np.exp(z - top)
    p: Matrix = e / (np.exp(-top) + e.sum(axis=1, keepdims=True))
    return p


@dataclass(frozen=True, slots=True)
class TaggedSpan:
    field: int
    start: int
    end: int
    p: float


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to the spaces around it ("CX-" of "CX-5" is "CX-5"), without the
    punctuation that closes a clause."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    while end > start and text[end - 1] in ".,;:!?)\"'":
        end -= 1
    while start < end and text[start] in "(\"'":
        start += 1
    return start, end


def spans_of(text: str, p: Matrix, tokens: TokenStates, token_min: float) -> list[TaggedSpan]:
    """The runs of tokens each field wins (its probability the highest, at least
    `token_min`), a one-token gap bridged, widened to whole words; each with its tokens' mean
    probability. A run with no word of two letters or digits is no value."""
    n, f = p.shape
    if n == 0 or f == 0:
        return []
    best = np.argmax(p, axis=1)
    won = p[np.arange(n), best] >= token_min
    out: list[TaggedSpan] = []
    for k in range(f):
        mine = won & (best == k)
        t = 0
        while t < n:
            if not mine[t]:
                t += 1
                continue
            first = last = t
            while last + 1 < n and (mine[last + 1] or (last + 2 < n and mine[last + 2])):
                last += 1 if mine[last + 1] else 2
            start, end = _whole_words(
                text, int(tokens.offsets[first, 0]), int(tokens.offsets[last, 1])
            )
            if _WORDLIKE.search(text[start:end]):
                out.append(TaggedSpan(k, start, end, float(p[first : last + 1, k].mean())))
            t = last + 1
    return out
