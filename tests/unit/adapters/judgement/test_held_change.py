"""The pair head on a held value (ADR 0137): its file is read only against its pin and its
embedder; a held field's answer under the held floor is kept only where the head reads a
change of the words held. The sentences below were written for this test."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.judgement.heads import Head
from factledger.adapters.judgement.held_change import (
    CLASSES,
    HeldChangeHead,
    HeldChangeIntegrityError,
    HeldPair,
    PairWidths,
    field_one_hot,
)
from factledger.adapters.judgement.qa_reader.held_changes import changed_statements
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.application.judgement.types import FieldStatement
from factledger.domain.transcript import Message, Role

BUCKETS = 16
READER = QaFieldReader(b"", floor=5.5, list_floor=6.0, held_floor=4.5)


FIELD_BUCKETS = 8


def _head(embedder: HashingEmbedder, changed_bias: float) -> HeldChangeHead:
    width = 4 * embedder.dimension + BUCKETS
    weights = np.zeros((width, 2), dtype=np.float32)
    bias = np.array([changed_bias, 0.0], dtype=np.float32)
    return HeldChangeHead(embedder, Head(weights, bias, CLASSES), PairWidths(BUCKETS), 0.7, -4.0)


def _field_head(embedder: HashingEmbedder, field_weights: dict[int, float]) -> HeldChangeHead:
    """A head with field buckets whose only weights sit on the field identity's columns."""
    start = 4 * embedder.dimension + BUCKETS
    weights = np.zeros((start + 3 * FIELD_BUCKETS + 1, 2), dtype=np.float32)
    for column, w in field_weights.items():
        weights[start + column, 0] = w
    bias = np.zeros(2, dtype=np.float32)
    widths = PairWidths(BUCKETS, FIELD_BUCKETS)
    return HeldChangeHead(embedder, Head(weights, bias, CLASSES), widths, 0.7, 0.0)


async def test_a_head_reads_back_from_its_file_and_only_against_its_pin(tmp_path: Path) -> None:
    embedder = HashingEmbedder(32)
    path = tmp_path / "held-change-head.npz"
    sha256 = _head(embedder, 2.0).save(path)
    pair = HeldPair("vehicle", "a 2019 Corolla", "I bought a Kia Niro last month.")

    loaded = HeldChangeHead.load(path, sha256, embedder)

    assert (loaded.changed_min, loaded.bar) == (0.7, -4.0)
    assert await loaded.changed([pair]) == pytest.approx([1 / (1 + np.exp(-2.0))])
    with pytest.raises(HeldChangeIntegrityError, match="sha256 differs"):
        HeldChangeHead.load(path, "0" * 64, embedder)
    with pytest.raises(HeldChangeIntegrityError, match="embedder"):
        HeldChangeHead.load(path, sha256, HashingEmbedder(64))


NAME = HeldPair("name", "Dana", "Thanks, Dana Reyes here, one more question.")
ADDRESS = HeldPair("address", "9 Elm Road", "We moved to 4 Mill Lane last month.")
INSURER = HeldPair("insurer", "Delta Dental", "We switched to Cigna in May.")
# Each of the three fields in a column of its own at FIELD_BUCKETS.
COLUMNS = [int(c) for c in field_one_hot(["name", "address", "insurer"], FIELD_BUCKETS).argmax(1)]


async def test_a_head_with_field_buckets_reads_each_fields_prior_from_its_file(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(32)
    path = tmp_path / "held-change-head.npz"
    sha256 = _field_head(embedder, {COLUMNS[0]: -3.0, COLUMNS[1]: 3.0}).save(path)

    loaded = HeldChangeHead.load(path, sha256, embedder)
    p_name, p_address = await loaded.changed([NAME, ADDRESS])

    assert loaded.widths == PairWidths(BUCKETS, FIELD_BUCKETS)
    assert p_name == pytest.approx(1 / (1 + np.exp(3.0)))
    assert p_address == pytest.approx(1 / (1 + np.exp(-3.0)))


async def test_a_field_whose_held_value_rarely_changed_is_read_as_unchanged(
    tmp_path: Path,
) -> None:
    rates = np.full(FIELD_BUCKETS, -1.0, dtype=np.float32)
    rates[COLUMNS[0]], rates[COLUMNS[1]] = 0.001, 0.05  # `insurer` never held in training
    gated = replace(_field_head(HashingEmbedder(32), {}), field_rates=rates, rate_min=0.01)
    path = tmp_path / "held-change-head.npz"

    loaded = HeldChangeHead.load(path, gated.save(path), HashingEmbedder(32))

    assert len(set(COLUMNS)) == 3
    assert loaded.rate_min == 0.01
    assert await loaded.changed([NAME, ADDRESS, INSURER]) == pytest.approx([0.0, 0.5, 0.5])


EDGES = (-4.0, 0.0, 4.5)


async def test_a_head_with_margin_edges_reads_the_readers_margin_and_the_span(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(32)
    d = embedder.dimension
    buckets = 1024  # few of the two values' n-grams share a column
    start = 4 * d + buckets
    # The span's block: its product and distance with the held words, their two cosines, the
    # margin's bins and the margin scaled; the only weights: on the n-gram cosine and margin.
    weights = np.zeros((start + 2 * d + 2 + len(EDGES) + 2, 2), dtype=np.float32)
    weights[start + 2 * d + 1, 0] = -6.0
    weights[-1, 0] = 5.0
    head = HeldChangeHead(
        embedder, Head(weights, np.zeros(2, np.float32), CLASSES), PairWidths(buckets, 0, EDGES),
        0.7, -4.0,
    )  # fmt: skip
    path = tmp_path / "held-change-head.npz"
    loaded = HeldChangeHead.load(path, head.save(path), embedder)
    sentence = "Hi, Dana here again. We switched to Cigna in May."
    new = HeldPair("insurer", "Delta Dental", sentence, "Cigna", 2.0)
    unsure = replace(new, margin=-3.0)
    repeated = HeldPair("name", "Dana", sentence, "Dana", 2.0)

    p_new, p_unsure, p_repeated = await loaded.changed([new, unsure, repeated])

    assert loaded.widths.margin_edges == EDGES
    # The same words at a margin 5 lower: the logit falls by 5 x 5 / 10.
    assert np.log(p_new / (1 - p_new)) - np.log(p_unsure / (1 - p_unsure)) == pytest.approx(2.5)
    assert p_new > 0.5
    assert p_repeated == pytest.approx(1 / (1 + np.exp(5.0)), rel=1e-4)  # the held words again


async def test_a_stacked_file_reads_the_pair_heads_logit_beside_the_readers_margin(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(32)
    pair_head = _head(embedder, 2.0).head  # reads every pair as a change at a logit of 2
    stack = np.zeros((len(EDGES) + 5, 2), dtype=np.float32)
    stack[0, 0], stack[-1, 0] = 1.0, 4.0  # the pair head's logit, and the margin scaled
    head = HeldChangeHead(
        embedder, Head(stack, np.zeros(2, np.float32), CLASSES), PairWidths(BUCKETS, 0, EDGES),
        0.7, -4.0, pair_head=pair_head,
    )  # fmt: skip
    path = tmp_path / "held-change-head.npz"

    loaded = HeldChangeHead.load(path, head.save(path), embedder)
    pairs = [replace(INSURER, span="Cigna", margin=m) for m in (-5.0, 2.5)]

    assert loaded.pair_head is not None
    assert await loaded.changed(pairs) == pytest.approx([1 / (1 + np.exp(-x)) for x in (0.0, 3.0)])


@dataclass
class BarReader:
    """The QA reader, as a fake that gives its answers from the bar it is asked at."""

    answers: list[FieldStatement]
    asked_held_floor: list[float | None] = field(default_factory=list)

    def floor_of(
        self, field_name: str, lists: Collection[str], held: Collection[str] = ()
    ) -> float:
        return READER.floor_of(field_name, lists, held)

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        floor: float | None = None,
        held: Collection[str] = (),
        held_floor: float | None = None,
        reach: float = 0.0,
        reaching: Collection[str] = (),
    ) -> list[FieldStatement]:
        self.asked_held_floor.append(held_floor)
        return [
            a
            for a in self.answers
            if a.p
            >= READER.floor_of(a.field, lists, held, held_floor)
            - (reach if a.field in reaching else 0)
        ]


@dataclass
class FixedHead:
    """The pair head, as a fake: a probability of a change per held field."""

    by_field: dict[str, float]
    changed_min: float = 0.7
    bar: float = -4.0
    asked: list[HeldPair] = field(default_factory=list)

    async def changed(self, pairs: Sequence[HeldPair]) -> list[float]:
        self.asked += pairs
        return [self.by_field[p.field] for p in pairs]


SAID = [
    Message(Role.AGENT, "Anything new since last year?"),
    Message(Role.SUBJECT, "We moved in March. I sold the Corolla and drive a Kia Niro now."),
]


async def test_a_held_fields_answer_under_its_floor_stays_only_where_the_head_reads_a_change() -> (
    None
):
    changed = FieldStatement(1, "a Kia Niro", "vehicle", -2.0)
    unchanged = FieldStatement(1, "March", "move_date", -1.0)
    too_low = FieldStatement(1, "Corolla", "address", -6.0)
    sure = FieldStatement(1, "We moved in March", "reason", 7.0)
    reader = BarReader([changed, unchanged, too_low, sure])
    head = FixedHead({"vehicle": 0.9, "move_date": 0.2, "address": 0.99})
    held = {"vehicle": "a 2019 Toyota Corolla", "move_date": "May", "address": "9 Elm Road"}

    found = await changed_statements(
        cast("QaFieldReader", reader),
        cast("HeldChangeHead", head),
        SAID,
        ["vehicle", "move_date", "address", "reason"],
        (),
        held,
    )

    assert found == [changed, sure]
    assert reader.asked_held_floor == [-4.0]
    assert [p.sentence for p in head.asked] == [
        "I sold the Corolla and drive a Kia Niro now.",
        "We moved in March.",
    ]
    assert head.asked[0].held == "a 2019 Toyota Corolla"
    assert (head.asked[0].span, head.asked[0].margin) == ("a Kia Niro", -2.0)


async def test_a_held_field_whose_words_are_not_known_keeps_the_held_floor() -> None:
    under = FieldStatement(1, "a Kia Niro", "vehicle", 2.0)
    over = FieldStatement(1, "March", "move_date", 5.0)
    head = FixedHead({"vehicle": 0.99, "move_date": 0.99})

    found = await changed_statements(
        cast("QaFieldReader", BarReader([under, over])),
        cast("HeldChangeHead", head),
        SAID,
        ["vehicle", "move_date"],
        (),
        {"vehicle": "", "move_date": "May"},
    )

    assert found == [over]
    assert head.asked == []
