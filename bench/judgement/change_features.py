"""Features of a reply read against the change it answers (ADR 0144, lab only).

No word list: the change's field and value and the question are what a reply is compared
with, by the packaged embedder's cosines and by character trigrams, digit runs and words
found in one text and not the other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.application.memory.ports import Embedder

WORD = re.compile(r"\w+", re.UNICODE)
DIGITS = re.compile(r"\d+")
SENTENCE_END = re.compile(r"[?.!;¿¡]+")
NEW_WORD_BINS = (0, 1, 2, 3)  # a reply's new words after its first: none, one, two, more
QUESTION_WORD_BINS = (0, 4, 8, 14)


@dataclass(frozen=True, slots=True)
class ChangeItem:
    """A reply to a question about one change of one field."""

    question: str
    reply: str
    field: str
    value: str


def field_words(field: str) -> str:
    return field.replace("_", " ")


def trigrams(text: str) -> set[str]:
    t = f" {' '.join(WORD.findall(text.lower()))} "
    return {t[i : i + 3] for i in range(len(t) - 2)}


def containment(part: str, whole: str) -> float:
    """The share of `part`'s character trigrams found in `whole`."""
    a = trigrams(part)
    return len(a & trigrams(whole)) / len(a) if a else 0.0


def _bin(count: int, bins: Sequence[int]) -> list[float]:
    k = max(i for i, low in enumerate(bins) if count >= low)
    return [1.0 if i == k else 0.0 for i in range(len(bins))]


def text_features(item: ChangeItem) -> list[float]:
    """What the reply holds that the question and the value do not, and how much the
    question asks beyond the value."""
    reply_words = [w.lower() for w in WORD.findall(item.reply)]
    known = {w.lower() for w in WORD.findall(f"{item.question} {item.value}")}
    new_after_first = [w for w in reply_words[1:] if len(w) >= 3 and w not in known]
    known_digits = set(DIGITS.findall(f"{item.question} {item.value}"))
    new_digits = [d for d in DIGITS.findall(item.reply) if d not in known_digits]
    value_words = {w.lower() for w in WORD.findall(item.value)}
    question_words = [w for w in WORD.findall(item.question.lower()) if w not in value_words]
    return [
        containment(item.value, item.question),
        containment(item.value, item.reply),
        min(len(new_digits), 2) / 2,
        *_bin(len(new_after_first), NEW_WORD_BINS),
        *_bin(len(question_words), QUESTION_WORD_BINS),
        min(item.question.count("?"), 3) / 3,
        min(item.question.count(","), 3) / 3,
        min(len(reply_words), 12) / 12,
        min(parts_beside_value(item), 2) / 2,
    ]


def parts_beside_value(item: ChangeItem) -> int:
    """How many sentences of the question hold none of the value (a second question asked
    beside the change's, or a greeting a bare acknowledgement may answer)."""
    parts = [p for p in SENTENCE_END.split(item.question) if WORD.search(p)]
    return sum(containment(item.value, p) < 0.3 for p in parts)


async def cosine_features(
    embedder: Embedder, items: Sequence[ChangeItem], schema_fields: Sequence[str]
) -> Matrix:
    """The reply's cosines with the change's field, its value and the question, and with
    the closest other field of the schema (and the own field's margin over it)."""
    replies = await embedder.embed([i.reply for i in items])
    values = await embedder.embed([i.value for i in items])
    questions = await embedder.embed([i.question for i in items])
    names = sorted(set(schema_fields) | {i.field for i in items})
    fields = await embedder.embed([field_words(f) for f in names])
    r, v, q, f = (np.asarray(m, dtype=np.float32) for m in (replies, values, questions, fields))
    by_field = r @ f.T
    own = np.array([names.index(i.field) for i in items])
    rows = np.arange(len(items))
    own_cos = by_field[rows, own]
    by_field[rows, own] = -1.0
    other = by_field.max(axis=1)
    out: Matrix = np.stack(
        [own_cos, (r * v).sum(axis=1), (r * q).sum(axis=1), other, own_cos - other], axis=1
    ).astype(np.float32)
    return out


def question_parts(item: ChangeItem) -> tuple[str, list[str]]:
    """The question's sentence holding most of the change's value, and its other sentences."""
    parts = [p.strip() for p in SENTENCE_END.split(item.question) if WORD.search(p)]
    if not parts:
        return item.question, []
    asked = max(range(len(parts)), key=lambda k: containment(item.value, parts[k]))
    return parts[asked], [p for k, p in enumerate(parts) if k != asked]


async def part_features(embedder: Embedder, items: Sequence[ChangeItem]) -> Matrix:
    """How much nearer the reply is to the asked part of the question than to its closest
    other part (zero when there is none), and whether there is another part (ADR 0149)."""
    split = [question_parts(i) for i in items]
    texts = [t for asked, others in split for t in (asked, *others)]
    r = np.asarray(await embedder.embed([i.reply for i in items]), dtype=np.float32)
    e = np.asarray(await embedder.embed(texts), dtype=np.float32)
    rows: list[list[float]] = []
    start = 0
    for k, (_, others) in enumerate(split):
        cos = e[start : start + 1 + len(others)] @ r[k]
        start += 1 + len(others)
        margin = float(cos[0] - cos[1:].max()) if others else 0.0
        rows.append([margin, 1.0 if others else 0.0])
    return np.array(rows, dtype=np.float32).reshape(len(items), 2)


async def change_features(
    embedder: Embedder,
    items: Sequence[ChangeItem],
    schema_fields: Sequence[str],
    readers: Matrix,
    *,
    with_parts: bool = False,
) -> Matrix:
    """`readers` (the packaged readers' probabilities, one row an item) beside the reply's
    reading against its change (and, `with_parts`, against the question's asked part)."""
    cos = await cosine_features(embedder, items, schema_fields)
    if with_parts:
        cos = np.hstack([cos, await part_features(embedder, items)])
    text = np.array([text_features(i) for i in items], dtype=np.float32)
    own = np.hstack([cos, text])
    # The tuned reader's yes beside each reading: a veto that weighs by how sure the yes is.
    out: Matrix = np.hstack([readers.astype(np.float32), own, own * readers[:, :1]])
    return out.astype(np.float32)
