"""`ValueFitHead`: whether the QA reader's answer is the kind of words its field holds.

The QA reader scores a span against "no value" for each field asked; it never compares the
span with what values of that field look like. Its confident mistakes are often words of
another kind ("payment method: raise the car deductible to $1,000", "smoking status: My
father smoked forty a day"), and many of its right answers under its floor are plainly a
value of the field ("latex" for allergies, "Amex" for a payment method).

The file holds, for each field the training conversations label, an encoder's vectors of the
values labelled there (the bank, int8 per row; the packaged file's encoder is the multilingual
one, which reads values said in other languages, ADR 0235; a file names its encoder and is
read over it), and one logistic regression
over five numbers of an answer: the reader's margin over its field's bar, how close the span
is to its field's nearest labelled values (the mean cosine of the `NEAREST` closest), that
closeness less the closest any other asked field's values come, whether the field is a list,
and how many words the span has. An answer over its bar is kept when the regression reads it
at `keep_min` or more; one under its bar by at most `reach`, when it reads it at `admit_min`
or more. A field the bank holds no values of is read by its bar alone, as without the file.
`python -m factledger.bench.judgement.value_fit` fits it on the kept-out training cases.

A file may also name a span verifier's graph (ADR 0239: a file beside it, pinned by the head,
loaded by its first reading; `adapters.judgement.span_verifier`): its log-odds of each
answer, read in the answer's line, are a sixth number (`VERIFIED_FEATURES`). The packaged
file names one (ADR 0245), asked only about the answers whose keeping its number could change.

A file may also read a later session's answers its own way (`LaterReading`; an unheld field's
answer where the subject holds a statement of some field): there an unheld field's answer is
often a change of a value the product missed before, said against the old one ("52 total",
"not Enterprise"), which first sessions' bars read as marginal. Bars of their own (ADR 0242),
and a regression of its own over the five numbers (ADR 0243), which reads no verifier. A file
without one reads every session alike.

A held field's answer (the subject holds a statement of the field: where an update is said)
passes as read, unless the settings give the held fields a bar of their own, `held_min` (ADR
0231: "Same address" or "Budget as before" is no address and no budget; not set by default,
for a bar of 0.5 bought less precision than its rule asked).
"""

from __future__ import annotations

import asyncio
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from factledger.adapters.judgement.cross_answers import CrossEncoderIntegrityError
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.heads import write_arrays
from factledger.adapters.judgement.span_verifier import (
    LOG_ODDS_BOUND,
    PinnedVerifier,
    verifier_pair,
)
from factledger.adapters.numpy_archives import open_archive
from factledger.adapters.pinned_files import read_pinned
from factledger.application.memory.ports import Embedder

# ADR 0243's file, adopted by ADR 0245's rule: ADR 0241's head (the span verifier beside it, a
# six-number regression and bars 0.60 / 0.65) for a first session's answers, and ADR 0235's five
# weights and bars 0.70 / 0.70 for a later session's unheld answers, over ADR 0235's bank and
# the multilingual encoder.
PACKAGED_VALUE_FIT = Path(__file__).parent / "weights" / "value-fit.npz"
PACKAGED_VALUE_FIT_SHA256 = "233d3e9871986cb52afd508fbc6fd1d54dfbafa16bc08bdadf69c45d75d94ec5"
NEAREST = 3  # how many of a field's labelled values a span's closeness is the mean of
MAX_WORDS = 20  # a span's words are read up to this many
FEATURES = ("over_bar", "own", "own_less_other", "is_list", "words")
# A file with a span verifier (ADR 0239) reads its log-odds as a sixth number.
VERIFIED_FEATURES = (*FEATURES, "verifier")
# Log-odds an answer's regression must clear its bar by, beyond what the verifier could say,
# to be settled without it: far more than float32 rounding moves a regression's sum.
SETTLED_SLACK = 1e-3


class ValueFitIntegrityError(RuntimeError):
    """The value-fit file is missing, differs from its pin, or was fitted over another
    embedder."""


@dataclass(frozen=True, slots=True)
class ValueAnswer:
    """One of the reader's answers as the head reads it: its field, its words, its margin
    over the field's bar (negative under it), whether the field is a list, the other fields
    asked beside it, whether the subject holds a statement of the field, the subject's line
    it was read in and the line before it when someone else said that one (what a span
    verifier reads), and whether the subject holds a statement of any field (a later
    session)."""

    field: str
    span: str
    over_bar: float
    is_list: bool
    others: tuple[str, ...]
    held: bool = False
    line: str = ""
    agent: str = ""
    later: bool = False


@dataclass(frozen=True, slots=True)
class Bank:
    """Each field's labelled values as unit vectors, int8 rows each with its scale; the rows
    are held as float32 (every int8 exactly), so a search does not convert them again."""

    rows: dict[str, tuple[Matrix, Matrix]]

    @classmethod
    def of(cls, vectors: dict[str, Matrix]) -> Bank:
        rows = {}
        for name, v in vectors.items():
            unit = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
            scale = np.maximum(np.abs(unit).max(axis=1), 1e-9) / 127.0
            q = np.round(unit / scale[:, None]).astype(np.int8)
            rows[name] = (q.astype(np.float32), scale.astype(np.float32))
        return cls(rows)

    def closeness(self, name: str, unit: Matrix) -> float | None:
        """The mean cosine of a unit vector with the field's `NEAREST` closest values;
        None: the bank holds none of the field's."""
        held = self.rows.get(name)
        if held is None:
            return None
        q, scale = held
        cosines = (q @ unit) * scale
        k = min(NEAREST, len(cosines))
        return float(np.sort(cosines)[-k:].mean())

    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        names = sorted(self.rows)
        return {
            "fields": np.array(names),
            "counts": np.array([len(self.rows[n][0]) for n in names], dtype=np.int64),
            "bank": np.concatenate([self.rows[n][0] for n in names]).astype(np.int8),
            "scales": np.concatenate([self.rows[n][1] for n in names]),
        }

    @classmethod
    def from_arrays(
        cls,
        fields: Sequence[str],
        counts: npt.NDArray[np.int64],
        bank: npt.NDArray[np.int8],
        scales: Matrix,
    ) -> Bank:
        rows, at, values = {}, 0, bank.astype(np.float32)
        for name, n in zip(fields, counts, strict=True):
            rows[str(name)] = (values[at : at + int(n)], scales[at : at + int(n)])
            at += int(n)
        return cls(rows)


class Verifier(Protocol):
    """A reader of answers in their lines (`PinnedVerifier`): its graph file and pin, and the
    log-odds of a right answer for each (field and agent line, bracketed line) pair, within
    `LOG_ODDS_BOUND` of even (`span_verifier.log_odds`)."""

    path: Path
    sha256: str

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]: ...


def verifier_beside(path: Path, z: NpzFile) -> PinnedVerifier:
    """The verifier the head's file at `path` names: a graph file beside it (a bare name, so
    that a file never reaches elsewhere), pinned by it."""
    if not {"verifier_file", "verifier_sha256"} <= set(z.files):
        raise ValueFitIntegrityError("the value-fit head does not name its verifier")
    name = str(z["verifier_file"])
    if Path(name).name != name or name in {"", ".", ".."}:
        raise ValueFitIntegrityError("the value-fit head's verifier is not a file beside it")
    try:
        return PinnedVerifier(path.parent / name, str(z["verifier_sha256"]))
    except CrossEncoderIntegrityError as exc:
        raise ValueFitIntegrityError(str(exc)) from exc


def pairs_of(answers: Sequence[ValueAnswer]) -> list[tuple[str, str]]:
    """What a span verifier reads of each answer."""
    return [verifier_pair(a.field, a.span, a.line, a.agent) for a in answers]


def feature_row(answer: ValueAnswer, own: float, other: float | None, reach: float) -> list[float]:
    """The five numbers the regression reads (`FEATURES`)."""
    words = min(len(answer.span.split()), MAX_WORDS) / 10.0
    over = max(answer.over_bar, -reach)
    return [over, own, own - (other if other is not None else 0.0), float(answer.is_list), words]


@dataclass(frozen=True, slots=True)
class LaterReading:
    """How an unheld field's answer in a later session is read: from `keep_min` over its bar,
    from `admit_min` under it, by the head's regression or, where `weights` is given, by one
    over the five numbers (`FEATURES`)."""

    keep_min: float
    admit_min: float
    weights: Matrix | None = None
    bias: float = 0.0


def later_reading_of(z: NpzFile) -> LaterReading | None:
    """A file's later reading: its bars, and its five weights where it has them."""
    if "later_bars" not in z.files:
        return None
    bars = z["later_bars"]
    if bars.shape != (2,):
        raise ValueFitIntegrityError("the value-fit head's later bars are not a pair")
    if "later_w" not in z.files:
        return LaterReading(float(bars[0]), float(bars[1]))
    weights = z["later_w"].astype(np.float32)
    if weights.shape != (len(FEATURES),) or "later_b" not in z.files:
        raise ValueFitIntegrityError("the value-fit head's later regression is not five numbers")
    return LaterReading(float(bars[0]), float(bars[1]), weights, float(z["later_b"]))


def logistic(row: Sequence[float], weights: Matrix, bias: float) -> float:
    z = float(np.dot(np.asarray(row, dtype=np.float32), weights)) + bias
    return float(1.0 / (1.0 + np.exp(-z)))


@dataclass(frozen=True, slots=True)
class ValueFitHead:
    embedder: Embedder
    bank: Bank
    weights: Matrix  # one per feature
    bias: float
    keep_min: float  # an answer over its bar is kept from this probability
    admit_min: float  # an answer under its bar (by at most `reach`) is kept from this one
    reach: float  # how far under its bar an answer may be read
    # A held field's answer is kept from this one; None: all. Set by the settings, never
    # written in the file (ADR 0231).
    held_min: float | None = None
    # Reads each answer in its line (ADR 0239); its log-odds are the sixth number. None: five.
    verifier: Verifier | None = None
    # How an unheld field's answer in a later session is read (ADRs 0242, 0243); None: as a
    # first session's.
    later_reading: LaterReading | None = None

    def reading_of(self, answer: ValueAnswer) -> tuple[Matrix, float, float, float]:
        """The regression (weights, bias) and the (keep, admit) bars an unheld field's answer
        is read by."""
        later = self.later_reading
        if not answer.later or later is None:
            return self.weights, self.bias, self.keep_min, self.admit_min
        if later.weights is None:
            return self.weights, self.bias, later.keep_min, later.admit_min
        return later.weights, later.bias, later.keep_min, later.admit_min

    def reads_verifier(self, answer: ValueAnswer) -> bool:
        """Whether the answer's reading holds the verifier's number: all but a later session's
        unheld answer where the later reading has a five-number regression of its own."""
        if self.verifier is None or not self.knows(answer.field):
            return False
        later = self.later_reading
        five = later is not None and later.weights is not None
        return not (answer.later and not answer.held and five)

    def knows(self, name: str) -> bool:
        return name in self.bank.rows

    async def features(self, answers: Sequence[ValueAnswer]) -> list[list[float] | None]:
        """Each answer's features; None for a field the bank holds no values of."""
        rows = await self._five_numbers(answers)
        await self._add_verifier(answers, rows, [self.reads_verifier(a) for a in answers])
        return rows

    async def _five_numbers(self, answers: Sequence[ValueAnswer]) -> list[list[float] | None]:
        known = [a for a in answers if self.knows(a.field)]
        spans = sorted({a.span for a in known})
        vectors = np.asarray(await self.embedder.embed(spans), dtype=np.float32) if spans else None
        unit = {}
        if vectors is not None:
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            unit = dict(zip(spans, vectors / norms, strict=True))
        out: list[list[float] | None] = []
        for a in answers:
            own = self.bank.closeness(a.field, unit[a.span]) if self.knows(a.field) else None
            if own is None:
                out.append(None)
                continue
            others = [
                c
                for name in a.others
                if name != a.field and (c := self.bank.closeness(name, unit[a.span])) is not None
            ]
            out.append(feature_row(a, own, max(others) if others else None, self.reach))
        return out

    async def _add_verifier(
        self,
        answers: Sequence[ValueAnswer],
        rows: Sequence[list[float] | None],
        asks: Sequence[bool],
    ) -> None:
        """Appends the verifier's log-odds to the rows of the answers it is asked about."""
        asked = [row is not None and ask for row, ask in zip(rows, asks, strict=True)]
        pairs = pairs_of([a for a, ask in zip(answers, asked, strict=True) if ask])
        if self.verifier is None or not pairs:
            return
        odds = iter(await asyncio.to_thread(self.verifier.log_odds_sync, pairs))
        for ask, row in zip(asked, rows, strict=True):
            if ask and row is not None:
                row.append(float(next(odds)))

    def probability(self, row: Sequence[float]) -> float:
        return logistic(row, self.weights, self.bias)

    async def kept(self, answers: Sequence[ValueAnswer]) -> list[bool]:
        """Whether each answer is kept: over its bar unless the head doubts it, under it (by
        at most `reach`) only where the head is sure, by its later reading in a later session;
        a held field's from `held_min`; a field the bank does not know, by its bar alone (a
        held one's, as read). The verifier reads only the answers whose keeping its number
        could change."""
        rows = await self._five_numbers(answers)
        settled = [self._settled(a, row) for a, row in zip(answers, rows, strict=True)]
        asks = [s is None and self.reads_verifier(a) for a, s in zip(answers, settled, strict=True)]
        await self._add_verifier(answers, rows, asks)
        return [
            s if s is not None else self.keeps(a, row)
            for a, row, s in zip(answers, rows, settled, strict=True)
        ]

    def keeps(self, a: ValueAnswer, row: Sequence[float] | None) -> bool:
        """Whether an answer is kept, given its row as `features` reads it (None: a field the
        bank does not know); `kept` decides the same, asking the verifier less."""
        if row is None:
            return a.held or a.over_bar >= 0
        reading = self._reading(a)
        if isinstance(reading, bool):
            return reading
        weights, bias, bar = reading
        return logistic(row, weights, bias) >= bar

    def _reading(self, a: ValueAnswer) -> bool | tuple[Matrix, float, float]:
        """What keeps an answer of a known field: the regression and the bar it must reach,
        or the decision where no number is read (a held answer passing as read, one under its
        bar past the reach)."""
        if a.held:
            return True if self.held_min is None else (self.weights, self.bias, self.held_min)
        weights, bias, keep, admit = self.reading_of(a)
        if a.over_bar >= 0:
            return weights, bias, keep
        return False if a.over_bar < -self.reach else (weights, bias, admit)

    def _settled(self, a: ValueAnswer, five: Sequence[float] | None) -> bool | None:
        """Whether the answer is kept, where its reading holds the verifier's number but no
        number within `LOG_ODDS_BOUND` could change it (a held answer passing as read, one
        under its bar past the reach, a regression sure either way); None elsewhere. The
        verifier is the costliest reading of an answer (ADR 0245's sync)."""
        if five is None or not self.reads_verifier(a):
            return None
        reading = self._reading(a)
        if isinstance(reading, bool):
            return reading
        weights, bias, bar = reading
        if not 0.0 < bar < 1.0:
            return None
        z = float(np.dot(np.asarray(five, dtype=np.float32), weights[:-1])) + bias
        spread = abs(float(weights[-1])) * LOG_ODDS_BOUND + SETTLED_SLACK
        at = math.log(bar / (1.0 - bar))
        if z - spread >= at:
            return True
        if z + spread < at:
            return False
        return None

    def save(self, path: Path) -> str:
        """Writes the file, naming its verifier's graph and pinning it (the graph copied beside
        the file when it is elsewhere), and its later reading where it has one; returns the
        file's SHA-256, to pin."""
        optional: dict[str, npt.NDArray[np.generic]] = {}
        if self.verifier is not None:
            graph = self.verifier.path
            if graph.resolve() != (path.parent / graph.name).resolve():
                shutil.copyfile(graph, path.parent / graph.name)
            optional["verifier_file"] = np.array(graph.name)
            optional["verifier_sha256"] = np.array(self.verifier.sha256)
        if (later := self.later_reading) is not None:
            optional["later_bars"] = np.array([later.keep_min, later.admit_min])
            if later.weights is not None:
                optional["later_w"] = later.weights.astype(np.float32)
                optional["later_b"] = np.array(later.bias, dtype=np.float32)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "model_id": np.array(self.embedder.model_id),
            "features": np.array(VERIFIED_FEATURES if self.verifier is not None else FEATURES),
            **optional,
            "w": self.weights.astype(np.float32),
            "b": np.array(self.bias, dtype=np.float32),
            "keep_min": np.array(self.keep_min),
            "admit_min": np.array(self.admit_min),
            "reach": np.array(self.reach),
            **self.bank.arrays(),
        }
        return write_arrays(path, arrays)

    @classmethod
    def load(
        cls, path: Path, sha256: str | None, embedder: Embedder, *others: Embedder
    ) -> ValueFitHead:
        """The file's head over the embedder it was fitted with, of `embedder` and `others`
        (the process's encoders: a file names one)."""
        data = read_pinned(path, sha256, ValueFitIntegrityError, "value-fit head")
        with open_archive(data) as z:
            wanted = str(z["model_id"])
            fitted_over = [e for e in (embedder, *others) if e.model_id == wanted]
            if not fitted_over:
                raise ValueFitIntegrityError(f"the value-fit head needs the embedder {wanted}")
            features = tuple(str(f) for f in z["features"])
            if features not in (FEATURES, VERIFIED_FEATURES) or len(z["w"]) != len(features):
                raise ValueFitIntegrityError("the value-fit head reads other features")
            verifier = None
            if features == VERIFIED_FEATURES:
                verifier = verifier_beside(path, z)
            later_reading = later_reading_of(z)
            bank = Bank.from_arrays(
                [str(f) for f in z["fields"]], z["counts"], z["bank"], z["scales"]
            )
            return cls(
                fitted_over[0],
                bank,
                z["w"].astype(np.float32),
                float(z["b"]),
                float(z["keep_min"]),
                float(z["admit_min"]),
                float(z["reach"]),
                verifier=verifier,
                later_reading=later_reading,
            )

    @classmethod
    def packaged(cls, embedder: Embedder, *others: Embedder) -> ValueFitHead:
        return cls.load(PACKAGED_VALUE_FIT, PACKAGED_VALUE_FIT_SHA256, embedder, *others)
