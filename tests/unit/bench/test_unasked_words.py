"""ADR 0108: the words that name nothing a fact holds are counted from labelled conversations:
used with many fields, held by no field's name, seldom in a value."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from factledger.application.memory.unasked_words import parse_unasked_words
from factledger.bench.field_slots.unasked import (
    WordSpread,
    unasked_words,
    word_spread,
    write_unasked_words,
)


def _case(field: str, value: str, line: str, question: str) -> dict[str, Any]:
    return {
        "fields": {field: "meaning"},
        "sessions": [
            {
                "lines": [{"role": "subject", "text": line}],
                "expect": {"proposals": [{"field": field, "line": 0, "value": value}]},
                "questions": [{"text": question, "field": field, "answer_keywords": [value]}],
            }
        ],
    }


CASES = [
    _case("budget", "40k", "Our budget is 40k now.", "What is their budget now?"),
    _case("supplier", "Kestrel", "We buy from Kestrel now.", "Who supplies them now?"),
    _case("town", "Lucca", "We live in Lucca now, thanks.", "Which town now?"),
    _case("pet", "a cat", "Now we have a cat called Now.", "What pet do they keep?"),
]


def test_a_word_said_with_every_field_and_in_no_value_names_nothing() -> None:
    spread = word_spread(CASES)
    assert len(spread["now"].fields) == 4
    assert unasked_words(spread, min_fields=3, max_value_share=0.0) == ["now"]


def test_a_field_name_or_a_value_keeps_a_word() -> None:
    spread = word_spread(CASES)
    # "budget" names a field; "kestrel" is a value; "thank" is said with one field only.
    assert spread["budget"].named
    assert spread["kestrel"].in_value == 2
    assert "thank" not in unasked_words(spread, min_fields=2, max_value_share=0.0)
    assert "budget" not in unasked_words(spread, min_fields=1, max_value_share=1.0)
    assert "kestrel" not in unasked_words(spread, min_fields=1, max_value_share=0.0)


def test_the_written_file_is_what_the_product_reads_under_the_printed_pin(tmp_path: Path) -> None:
    spread = word_spread(CASES)
    fitted = {"words": {w: {"fields": 4} for w in unasked_words(spread, 3, 0.0)}}
    path = tmp_path / "unasked_words.json"

    pin = write_unasked_words(fitted, path)

    assert parse_unasked_words(path.read_bytes(), pin) == {"now"}


def test_a_verb_said_with_every_field_is_not_fitted_an_adverb_is() -> None:
    # ADR 0118: "take" links "What does she take?" to "I take salbutamol"; "still" says when.
    spread = {w: WordSpread(fields=Counter({"a": 1, "b": 1, "c": 1})) for w in ("take", "still")}

    assert unasked_words(spread, min_fields=3, max_value_share=0.0) == ["still"]
