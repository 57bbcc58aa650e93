"""The typed-value reader scored on written items: each item sorted by what was expected and
what was read, and the tallies' precision and recall."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.adapters.values.words import WordsValueReader
from factledger.bench.evalsets.typed_items import load_items, main, parse_items, score_item, tally

ITEMS = [
    {
        "id": "v-1",
        "language": "en",
        "type": "date",
        "field": "date_of_birth",
        "said_on": "2026-03-14",
        "words": "born the ninth of June sixty-eight",
        "expected": "1968-06-09",
    },
    {
        "id": "v-2",
        "language": "en",
        "type": "money",
        "field": "budget",
        "said_on": "2026-03-14",
        "currency": "EUR",
        "words": "about 450k",
        "expected": "450000 EUR",
    },
    {
        "id": "v-3",
        "language": "en",
        "type": "number",
        "field": "bedrooms",
        "said_on": "2026-03-14",
        "words": "three or four",
        "expected": None,
    },
    {
        "id": "v-4",
        "language": "en",
        "type": "number",
        "field": "bedrooms",
        "said_on": "2026-03-14",
        "words": "three",
        "expected": "4",
    },
    {
        "id": "v-5",
        "language": "en",
        "type": "number",
        "field": "team_size",
        "said_on": "2026-03-14",
        "words": "a couple of dozen",
        "expected": "24",
    },
    {
        "id": "v-6",
        "language": "en",
        "type": "money",
        "field": "deposit",
        "said_on": "2026-03-14",
        "currency": "GBP",
        "words": "two thousand",
        "expected": None,
    },
]


def test_each_item_is_sorted_by_what_was_expected_and_what_was_read() -> None:
    reader = WordsValueReader()

    outcomes = [score_item(item, reader).outcome for item in parse_items(ITEMS)]

    assert outcomes == ["right", "right", "kept_none", "wrong", "missed", "false_value"]


def test_the_tally_counts_a_false_value_against_precision_and_a_miss_against_recall() -> None:
    reader = WordsValueReader()
    scored = [score_item(item, reader) for item in parse_items(ITEMS)]

    counts = tally(scored)

    assert (counts["right"], counts["wrong"], counts["false_value"]) == (2, 1, 1)
    assert counts["precision"] == 0.5
    assert counts["recall"] == 0.5  # two of the four values expected


def test_a_malformed_answer_is_refused_naming_it() -> None:
    bad = [{**ITEMS[1], "expected": "about 450k"}]
    with pytest.raises(ValueError, match="expected: 'about 450k'"):
        parse_items(bad)


def test_items_load_from_every_items_file_of_a_half(tmp_path: Path) -> None:
    (tmp_path / "items-en.yaml").write_text(yaml.safe_dump(ITEMS[:2]), encoding="utf-8")
    (tmp_path / "items-fr.yaml").write_text(yaml.safe_dump(ITEMS[2:]), encoding="utf-8")
    (tmp_path / "notes.yaml").write_text("- not an item\n", encoding="utf-8")

    assert [item.id for item in load_items(tmp_path)] == [f"v-{n}" for n in range(1, 7)]


def test_a_held_out_half_is_never_listed(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        main([str(tmp_path / "typed1" / "heldout"), "--detail", str(tmp_path / "d.json")])
