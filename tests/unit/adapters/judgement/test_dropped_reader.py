"""The dropped-items reader (ADR 0159): an item is read against a sentence only when the
sentence names it (by its words, not function words or numbers, or a shared first five
letters), the item's words are marked in the sentence the model reads, and an item is
dropped from the model's threshold. A tiny model (the word "stopped" in the sentence reads
as dropped) stands in for a trained one; the settings refuse removals without a model."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from factledger.adapters.judgement.cross_answers import CLASSES
from factledger.adapters.judgement.dropped import (
    DroppedHeadIntegrityError,
    LearnedDroppedReader,
    marked,
    names,
    pair_of,
)
from factledger.api.bootstrap.judgement import dropped_items_reader
from factledger.api.settings.proposals import ProposalSettings
from factledger.application.proposals.dropped import DroppedItem, HeldList
from tests.unit.adapters.judgement.test_cross_answers import tiny_model


@pytest.mark.parametrize(
    ("sentence", "item", "named"),
    [
        ("The cardiologist took me off the aspirin.", "aspirin", True),
        ("Ya no tomo la aspirina.", "aspirin", True),  # five letters in common
        ("We dropped Lumenly's demo.", "Lumenly", True),
        ("I still take metformin 500.", "metformin 500 twice a day", True),
        ("I take 500 of something else.", "metformin 500 twice a day", False),  # no number
        ("The other one is fine.", "the baby aspirin", False),
        ("Anything at all.", "a", False),  # an item of no naming word names nothing
    ],
)
def test_an_item_is_read_only_against_a_sentence_that_names_it(
    sentence: str, item: str, named: bool
) -> None:
    assert names(sentence, item) is named


def test_the_items_words_are_marked_in_the_sentence_the_model_reads() -> None:
    said = "Ok so we're down to you and HubStar, Calyx is out"
    assert marked(said, "HubStar") == "Ok so we're down to you and [HubStar], Calyx is out"
    assert pair_of("competitors", "Calyx", said) == (
        "competitors: Calyx",
        "Ok so we're down to you and HubStar, [Calyx] is out",
    )


def reader(tmp_path: Path, yes_min: str = "0.9") -> LearnedDroppedReader:
    path = tmp_path / "dropped.onnx"
    sha256 = tiny_model(path, {"yes_min": yes_min, "classes": ",".join(CLASSES)}, "stopped")
    return LearnedDroppedReader.load(path, sha256)


async def test_each_named_held_item_is_read_and_dropped_from_the_threshold(
    tmp_path: Path,
) -> None:
    lists = [
        HeldList("medications", ("metformin", "aspirin")),
        HeldList("allergies", ("penicillin",)),
    ]
    sentences = ["Metformin as before.", "Oh, and I stopped the aspirin.", "Nothing else."]

    found = await reader(tmp_path).dropped(lists, sentences)

    assert found == [DroppedItem("medications", "aspirin", 1)]
    # Below the file's threshold nothing is dropped.
    assert await reader(tmp_path, yes_min="0.9999").dropped(lists, sentences) == []


def test_a_file_that_differs_from_its_pin_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dropped.onnx"
    tiny_model(path, {"yes_min": "0.9", "classes": ",".join(CLASSES)}, "stopped")
    with pytest.raises(DroppedHeadIntegrityError, match="sha256 differs"):
        LearnedDroppedReader.load(path, "0" * 64)


def test_removals_are_off_by_default_and_need_a_model_to_be_on(tmp_path: Path) -> None:
    assert dropped_items_reader(ProposalSettings()) is None
    with pytest.raises(ValidationError, match="dropped_items: needs dropped_items_model_path"):
        ProposalSettings(dropped_items=True)
    path = tmp_path / "dropped.onnx"
    sha256 = tiny_model(path, {"yes_min": "0.9", "classes": ",".join(CLASSES)}, "stopped")
    on = ProposalSettings(
        dropped_items=True, dropped_items_model_path=path, dropped_items_model_sha256=sha256
    )
    assert isinstance(dropped_items_reader(on), LearnedDroppedReader)
    # A file that is not the pinned one leaves removals off (logged), the product serving.
    off = ProposalSettings(
        dropped_items=True, dropped_items_model_path=path, dropped_items_model_sha256="0" * 64
    )
    assert dropped_items_reader(off) is None


def test_a_dropped_items_model_given_with_removals_off_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="dropped_items_model_path: set only with"):
        ProposalSettings(dropped_items_model_path=tmp_path / "dropped.onnx")


def test_a_tuned_encoders_file_is_checked_against_its_pin_too(tmp_path: Path) -> None:
    path = tmp_path / "dropped.npz"
    path.write_bytes(b"not the pinned file")
    with pytest.raises(DroppedHeadIntegrityError):
        LearnedDroppedReader.load(path, "0" * 64)
