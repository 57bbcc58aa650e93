"""`HeldChangeHead`: whether a sentence states another value of a field than the one held.

A QA reader learns a value's words; whether the field already held another value never
reaches it. This head reads the pair: the words the subject holds for a field, and a
sentence of a later session, and gives the probability that the sentence states a different
value of that field (an update or a correction), as opposed to stating nothing of it or the
same value again. One logistic regression over the packaged sentence embedder (frozen): the
sentence's vector, its element-wise product and distance with the held value's, its product
with the field's name, and its hashed character n-grams. A file with field buckets (ADR 0143)
also reads the field's identity (its name hashed to a one-hot block: a learned prior of how
often that field's held value changes) and how much of the held words the sentence repeats
(the cosine of their n-grams), each also per field: a name said again in a greeting and a
value restated read as no change, where new words beside a held name alone had read as one.
A file with margin edges (ADR 0145) was trained on the QA reader's own answers and reads the
answer's span beside the sentence (how close its words and meaning are to the held words) and
the reader's margin for it (scaled, and one-hot between the edges).

The file (`.npz`) holds the head, the embedder it was trained over, the smallest probability
that counts as a change (`changed_min`) and the QA reader's bar from which an answer of a held
field is offered to the head (`bar`), both fitted on kept-out training cases; its SHA-256 is
checked before a byte of it is used. `python -m factledger.bench.judgement.held_change` fits
it.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.features import Matrix, char_ngrams
from factledger.adapters.judgement.heads import Head, write_arrays
from factledger.adapters.numpy_archives import open_archive
from factledger.adapters.pinned_files import read_pinned
from factledger.application.memory.ports import Embedder

CLASSES = ("changed", "not")
# ADR 0145's stacked head, fitted against the packaged QA reader's answers and margins (ADR
# 0146's file): a reader with other margins needs its own fit.
PACKAGED_HELD_CHANGE_HEAD = Path(__file__).parent / "weights" / "held-change-head.npz"
PACKAGED_HELD_CHANGE_HEAD_SHA256 = (
    "33dd7681e1266186788c7192f1f902ec948679bbc9e447dc6a52eb72633582fa"
)


class HeldChangeIntegrityError(RuntimeError):
    """The held-change head's file is missing, differs from its pin, or was trained over
    another embedder."""


@dataclass(frozen=True, slots=True)
class HeldPair:
    """A sentence read against the words the subject holds for `field`."""

    field: str
    held: str
    sentence: str
    span: str = ""  # the reader's answer in the sentence (read by a file with margin edges)
    margin: float = 0.0  # the reader's margin for `span` over "no value"


def field_words(name: str) -> str:
    return name.replace("_", " ").strip()


@dataclass(frozen=True, slots=True)
class PairWidths:
    """How many hashed columns the n-grams and the field's identity take (0: no identity);
    the reader's margin's bin edges (empty: the span and margin are not read)."""

    buckets: int
    field_buckets: int = 0
    margin_edges: tuple[float, ...] = ()


# The reader's margin over "no value" is about -10 to 12; the head reads it scaled to about 1.
MARGIN_SCALE = 10.0


def field_one_hot(names: Sequence[str], buckets: int) -> Matrix:
    """Each field's name hashed (CRC-32, the same in every process) to one column of `buckets`."""
    out = np.zeros((len(names), buckets), dtype=np.float32)
    out[np.arange(len(names)), [zlib.crc32(n.encode()) % buckets for n in names]] = 1.0
    return out


def row_cosines(a: Matrix, b: Matrix) -> Matrix:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cosines: Matrix = ((a * b).sum(axis=1) / np.maximum(norms, 1e-9)).astype(np.float32)
    return cosines[:, None]


def margin_bins(margins: Sequence[float], edges: Sequence[float]) -> Matrix:
    """Each margin one-hot between `edges` (len(edges) + 1 columns), beside the margin scaled."""
    which = np.searchsorted(np.asarray(edges, dtype=np.float32), margins, side="right")
    out = np.zeros((len(margins), len(edges) + 2), dtype=np.float32)
    out[np.arange(len(margins)), which] = 1.0
    out[:, -1] = np.asarray(margins, dtype=np.float32) / MARGIN_SCALE
    return out


def span_features(
    spans: Matrix, held: Matrix, pairs: Sequence[HeldPair], widths: PairWidths
) -> Matrix:
    """The answer's words against the held words (a repeated value reads close in both its
    meaning and its letters), and the reader's margin for it."""
    grams = row_cosines(
        char_ngrams([p.span for p in pairs], widths.buckets),
        char_ngrams([p.held for p in pairs], widths.buckets),
    )
    return np.hstack(
        [
            spans * held,
            np.abs(spans - held),
            row_cosines(spans, held),
            grams,
            margin_bins([p.margin for p in pairs], widths.margin_edges),
        ]
    )


def pair_features(
    sentences: Matrix,
    held: Matrix,
    fields: Matrix,
    pairs: Sequence[HeldPair],
    widths: PairWidths,
    spans: Matrix | None = None,
) -> Matrix:
    grams = char_ngrams([p.sentence for p in pairs], widths.buckets)
    parts = [sentences, sentences * held, np.abs(sentences - held), sentences * fields, grams]
    if widths.field_buckets:
        which = field_one_hot([p.field for p in pairs], widths.field_buckets)
        meaning = row_cosines(sentences, held)
        repeated = row_cosines(grams, char_ngrams([p.held for p in pairs], widths.buckets))
        parts += [which, which * meaning, which * repeated, repeated]
    if widths.margin_edges:
        parts.append(span_features(held if spans is None else spans, held, pairs, widths))
    return np.hstack(parts).astype(np.float32)


async def embed_held_pairs(
    embedder: Embedder, pairs: Sequence[HeldPair], widths: PairWidths
) -> Matrix:
    """The features of each pair, each distinct text embedded once."""
    spans = [p.span for p in pairs] if widths.margin_edges else []
    texts = sorted(
        {t for p in pairs for t in (p.sentence, p.held, field_words(p.field))} | {*spans}
    )
    vectors = await embedder.embed(texts)
    row = {t: i for i, t in enumerate(texts)}
    v = np.asarray(vectors, dtype=np.float32)

    def of(words: Sequence[str]) -> Matrix:
        picked: Matrix = v[[row[w] for w in words]]
        return picked

    return pair_features(
        of([p.sentence for p in pairs]),
        of([p.held for p in pairs]),
        of([field_words(p.field) for p in pairs]),
        pairs,
        widths,
        of(spans) if spans else None,
    )


def stacked_features(
    x: Matrix, pair_head: Head, widths: PairWidths, fields: Sequence[str]
) -> Matrix:
    """A stacked file's few columns (ADR 0145): the pair head's logit of a change over the
    pair's own columns, beside the span's two cosines with the held words and the margin, and
    the field's identity when the file has field buckets."""
    z = x[:, : pair_head.weights.shape[0]] @ pair_head.weights + pair_head.bias
    changed, kept = pair_head.column(CLASSES[0]), pair_head.column(CLASSES[1])
    parts = [(z[:, changed] - z[:, kept])[:, None], x[:, -(len(widths.margin_edges) + 4) :]]
    if widths.field_buckets:
        parts.append(field_one_hot(fields, widths.field_buckets))
    return np.hstack(parts).astype(np.float32)


@dataclass(frozen=True, slots=True)
class HeldChangeHead:
    embedder: Embedder
    head: Head
    widths: PairWidths
    changed_min: float  # the smallest probability of a change that counts as one
    bar: float  # the QA reader's margin from which a held field's answer is offered
    # Per field column, how often a held value of the field changed in the training cases
    # (-1: never held there); a field under `rate_min` is read as unchanged (ADR 0143).
    field_rates: Matrix | None = None
    rate_min: float = 0.0
    # A stacked file's pair head (ADR 0137's), whose logit `head` reads beside the margin.
    pair_head: Head | None = None

    async def changed(self, pairs: Sequence[HeldPair]) -> list[float]:
        """Each pair's probability that its sentence states another value than the held."""
        if not pairs:
            return []
        x = await embed_held_pairs(self.embedder, pairs, self.widths)
        if self.pair_head is not None:
            x = stacked_features(x, self.pair_head, self.widths, [p.field for p in pairs])
        p = self.head.probabilities(x)
        changed = p[:, self.head.column(CLASSES[0])] * self.allowed([pair.field for pair in pairs])
        return [float(x) for x in changed]

    def allowed(self, fields: Sequence[str]) -> Matrix:
        """1 for each field the per-field gate lets the head read as changed, else 0."""
        if self.field_rates is None or not self.rate_min:
            return np.ones(len(fields), dtype=np.float32)
        rates = self.field_rates[field_one_hot(fields, self.widths.field_buckets).argmax(axis=1)]
        gated: Matrix = ((rates < 0) | (rates >= self.rate_min)).astype(np.float32)
        return gated

    def save(self, path: Path) -> str:
        """Writes the file; returns its SHA-256, to pin."""
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "model_id": np.array(self.embedder.model_id),
            "buckets": np.array(self.widths.buckets),
            "changed_min": np.array(self.changed_min),
            "bar": np.array(self.bar),
            "w": self.head.weights,
            "b": self.head.bias,
            "classes": np.array(self.head.classes),
        }
        # A head without the field's columns is written as ADR 0137's files are, byte for
        # byte: the shipped file is reproduced by its README command.
        if self.widths.field_buckets:
            arrays["field_buckets"] = np.array(self.widths.field_buckets)
        if self.widths.margin_edges:
            arrays["margin_edges"] = np.array(self.widths.margin_edges, dtype=np.float32)
        if self.pair_head is not None:
            arrays["pair_w"], arrays["pair_b"] = self.pair_head.weights, self.pair_head.bias
        if self.field_rates is not None:
            arrays["field_rates"] = self.field_rates
            arrays["rate_min"] = np.array(self.rate_min)
        return write_arrays(path, arrays)

    @classmethod
    def load(cls, path: Path, sha256: str | None, embedder: Embedder) -> HeldChangeHead:
        data = read_pinned(path, sha256, HeldChangeIntegrityError, "held-change head")
        with open_archive(data) as z:
            if str(z["model_id"]) != embedder.model_id:
                raise HeldChangeIntegrityError(
                    f"the held-change head needs the embedder {z['model_id']}"
                )
            head = Head(
                z["w"].astype(np.float32),
                z["b"].astype(np.float32),
                tuple(str(c) for c in z["classes"]),
            )
            # A file written before ADR 0143 has no field buckets: it reads as it was fitted.
            field_buckets = int(z["field_buckets"]) if "field_buckets" in z.files else 0
            # A file written before ADR 0145 has no margin edges: it reads no span or margin.
            edges = z["margin_edges"] if "margin_edges" in z.files else np.zeros(0)
            widths = PairWidths(int(z["buckets"]), field_buckets, tuple(float(e) for e in edges))
            gated = "field_rates" in z.files
            pair_head = (
                Head(z["pair_w"].astype(np.float32), z["pair_b"].astype(np.float32), head.classes)
                if "pair_w" in z.files
                else None
            )
            return cls(
                embedder,
                head,
                widths,
                float(z["changed_min"]),
                float(z["bar"]),
                z["field_rates"].astype(np.float32) if gated else None,
                float(z["rate_min"]) if gated else 0.0,
                pair_head,
            )

    @classmethod
    def packaged(cls, embedder: Embedder) -> HeldChangeHead:
        return cls.load(PACKAGED_HELD_CHANGE_HEAD, PACKAGED_HELD_CHANGE_HEAD_SHA256, embedder)
