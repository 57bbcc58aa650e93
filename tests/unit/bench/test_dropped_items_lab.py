"""The dropped-items lab (ADR 0159): items are read as the product reads a session's
sentences, a named held item is one pair labelled by whether the line drops it, a dropped
item said in other words altogether is no pair and counts as missed, and the pairs are
written in the replies' format the multilingual trainer reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.adapters.judgement.cross_answers import CLASSES
from factledger.adapters.judgement.dropped import LearnedDroppedReader
from factledger.bench.judgement.answers import pairs_in
from factledger.bench.judgement.dropped import (
    DROPPED,
    KEPT,
    contrast_pairs,
    load_items,
    score,
    threshold_for,
    training_pairs,
    write_pairs,
)
from tests.unit.adapters.judgement.test_cross_answers import tiny_model

ITEMS = [
    {
        "id": "t-en-001",
        "language": "en",
        "field": "medications",
        "held": ["metformin", "aspirin", "the water pill"],
        "said": "Still on metformin. The cardiologist stopped the aspirin, and the diuretic too.",
        "dropped": ["aspirin", "the water pill"],
        "kind": "stopped",
    },
    {
        "id": "t-en-002",
        "language": "en",
        "field": "competitors",
        "held": ["Lumenly", "Quarry"],
        "said": "Lumenly's demo was rough, still looking at them though.",
        "dropped": [],
        "kind": "complaint",
    },
]


@pytest.fixture
def items(tmp_path: Path) -> Path:
    (tmp_path / "items-en.yaml").write_text(yaml.safe_dump(ITEMS), encoding="utf-8")
    return tmp_path


def test_each_named_held_item_is_a_pair_labelled_by_the_writer(items: Path) -> None:
    cases = load_items([items / "items-en.yaml"])
    pairs = training_pairs(cases)
    assert [(p.question, p.label) for p in pairs] == [
        ("medications: metformin", KEPT),
        ("medications: aspirin", DROPPED),
        ("competitors: Lumenly", KEPT),
    ]
    assert pairs[1].reply.startswith("Still on metformin. The cardiologist stopped the [aspirin]")


def test_a_dropped_item_not_held_is_refused_naming_the_item(tmp_path: Path) -> None:
    wrong = [{**ITEMS[0], "dropped": ["ibuprofen"]}]
    (tmp_path / "items-en.yaml").write_text(yaml.safe_dump(wrong), encoding="utf-8")
    with pytest.raises(ValueError, match="t-en-001: dropped names an item not held"):
        load_items([tmp_path / "items-en.yaml"])


def test_the_pairs_are_written_as_replies_the_trainer_reads(items: Path, tmp_path: Path) -> None:
    written = write_pairs(load_items([items / "items-en.yaml"]), tmp_path / "pairs")
    read = pairs_in([tmp_path / "pairs"])
    assert written == len(read) == 3
    assert [p.label for p in read] == ["neither", "yes", "neither"]


def test_a_reader_is_scored_by_items_and_a_drop_in_other_words_is_missed(
    items: Path, tmp_path: Path
) -> None:
    path = tmp_path / "dropped.onnx"
    sha256 = tiny_model(path, {"yes_min": "0.9", "classes": ",".join(CLASSES)}, "stopped")
    figures = score(LearnedDroppedReader.load(path, sha256), load_items([items / "items-en.yaml"]))
    # The aspirin's sentence says "stopped": found; the water pill, said as "the diuretic",
    # is never read.
    assert (figures["right"], figures["wrong"], figures["missed"]) == (1, 0, 1)
    assert figures["recall"] == 0.5
    assert len(figures["misses"]) == 1  # type: ignore[arg-type]


def test_the_threshold_is_the_lowest_reading_at_the_target_precision() -> None:
    import numpy as np

    p = np.array([0.99, 0.97, 0.96, 0.6, 0.5, 0.4])
    labels = [DROPPED, DROPPED, DROPPED, KEPT, DROPPED, KEPT]
    threshold, figures = threshold_for(p, labels)
    assert threshold == pytest.approx(0.96)
    assert figures == {"precision": 1.0, "recall": 0.75}


def test_a_contrast_pair_brackets_another_word_of_a_dropping_line_as_kept(items: Path) -> None:
    (pair,) = contrast_pairs(load_items([items / "items-en.yaml"]))
    question, reply = pair.question, pair.reply
    assert pair.label == KEPT
    assert question.startswith("medications: ")
    word = question.removeprefix("medications: ")
    assert f"[{word}]" in reply
    assert word.lower() not in {"metformin", "aspirin", "still", "the"}
