"""A value is never half a word: widened to whole words, a word running on across a hyphen,
a dot or an at sign between word characters, or a comma between digits."""

from __future__ import annotations

import pytest

from factledger.adapters.judgement.qa_reader.decode import widen


@pytest.mark.parametrize(
    ("line", "piece", "word"),
    [
        ("Thanks, Jae-won Park", "Jae", "Jae-won"),
        ("since the update 2.7, no logo", "7", "2.7"),
        ("my gmail: sasha.p88@gmail.com", "p88", "sasha.p88@gmail.com"),
        ("up to 5,000 a month", "000", "5,000"),
        ("Dr. Okonkwo-Reyes", "Reyes", "Okonkwo-Reyes"),
    ],
)
def test_a_word_runs_on_across_a_joining_character(line: str, piece: str, word: str) -> None:
    at = line.index(piece)

    assert line[slice(*widen(line, at, at + len(piece)))] == word


@pytest.mark.parametrize(
    ("line", "piece"),
    [
        ("Boxmart, Leeds", "Boxmart"),  # a comma between words parts them
        ("It's Ana - from Porto", "Ana"),  # a dash with spaces round it too
        ("The end. Next", "end"),  # a sentence's full stop
        ("Leeds.", "Leeds"),
    ],
)
def test_punctuation_that_joins_no_word_stops_it(line: str, piece: str) -> None:
    at = line.index(piece)

    assert line[slice(*widen(line, at, at + len(piece)))] == piece
