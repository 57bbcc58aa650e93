"""A turn of the subject's lines read as one passage (ADR 0120): which lines are packed, and
every answer mapped back to the line it stands in."""

from __future__ import annotations

from factledger.adapters.judgement.qa_reader.passages import (
    SEPARATOR,
    LineRead,
    Passage,
    passages,
)


def _indexes(found: list[Passage]) -> list[list[int]]:
    return [[line.index for line in p.lines] for p in found]


def test_lines_each_after_an_agents_line_are_read_one_by_one() -> None:
    lines = [LineRead(1, "Accra", "Where are you based?"), LineRead(3, "Nurse", "Your job?")]

    found = passages(lines, [2, 2], room=90)

    assert _indexes(found) == [[1], [3]]
    assert [(p.text, p.agent) for p in found] == [
        ("Accra", "Where are you based?"),
        ("Nurse", "Your job?"),
    ]


def test_a_turn_of_lines_is_one_passage_after_the_agents_line_before_it() -> None:
    lines = [
        LineRead(1, "Sure.", "Where are you based?"),
        LineRead(2, "Accra.", ""),
        LineRead(3, "Since May.", ""),
        LineRead(5, "Nurse.", "Your job?"),
    ]

    found = passages(lines, [3, 3, 4, 3], room=90)

    assert _indexes(found) == [[1, 2, 3], [5]]
    assert found[0].text == SEPARATOR.join(["Sure.", "Accra.", "Since May."])
    assert found[0].agent == "Where are you based?"


def test_lines_apart_in_the_transcript_are_never_packed() -> None:
    # An empty line of the subject's between them is not read: the two are not one turn.
    lines = [LineRead(0, "Hi.", ""), LineRead(2, "Accra.", "")]

    assert _indexes(passages(lines, [2, 2], room=90)) == [[0], [2]]


def test_a_turn_too_long_for_one_window_is_cut_between_lines() -> None:
    lines = [LineRead(i, f"line {i}", "") for i in range(5)]

    found = passages(lines, [40, 40, 40, 95, 10], room=90)

    # A line longer than the room alone keeps its own passage (read in windows as before).
    assert _indexes(found) == [[0, 1], [2], [3], [4]]


def test_an_answer_is_mapped_back_to_the_line_it_stands_in() -> None:
    passage = Passage((LineRead(4, "I'm Ama.", "Name?"), LineRead(5, "I nurse in Accra.", "")))
    text = passage.text
    accra = text.index("Accra")
    ama = text.index("Ama")

    assert passage.locate(accra, accra + 5) == (passage.lines[1], 11, 16)
    assert passage.locate(ama, ama + 3) == (passage.lines[0], 4, 7)
    # A span run across the lines' boundary is its first line's, cut at that line's end.
    assert passage.locate(ama, accra + 5) == (passage.lines[0], 4, 8)
    # Only the separator: no words of any line.
    assert passage.locate(len("I'm Ama."), len("I'm Ama.") + 1) is None
