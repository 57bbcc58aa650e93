"""ADR 0162: a list field's span cut where the reader reads one item end and the next begin.

The reader's scores are written by hand here, token by token, relative to "no answer" (whose
start and end score 0): what is tested is the decoding, not the model.
"""

from __future__ import annotations

import re

import numpy as np

from factledger.adapters.judgement.qa_reader.decode import answers

FLOOR = 6.0
FIRST = 1  # the line's first token, after the window's "no answer" position


def tokens_of(line: str) -> list[tuple[int, int]]:
    """Word and punctuation tokens, "Air" "flow" for "Airflow" (a word in two pieces)."""
    spans = [m.span() for m in re.finditer(r"\w+|[^\w\s]", line)]
    return [piece for x, y in spans for piece in _pieces(line, x, y)]


def _pieces(line: str, x: int, y: int) -> list[tuple[int, int]]:
    return [(x, x + 3), (x + 3, y)] if line[x:y] == "Airflow" else [(x, y)]


def read(line: str, starts: dict[str, float], ends: dict[str, float], *, cut: bool) -> list[str]:
    """The items `answers` gives for `line`, the tokens' start and end scores by their words
    (unnamed tokens score -5: read as neither)."""
    offsets = tokens_of(line)
    words = [line[x:y] for x, y in offsets]
    start = np.array([0.0] + [starts.get(w, -5.0) for w in words], dtype=np.float32)
    end = np.array([0.0] + [ends.get(w, -5.0) for w in words], dtype=np.float32)
    found = answers(start, end, FIRST, offsets, line, margin=FLOOR, many=True, items=cut)
    return [line[a.start : a.end] for a in found]


SKILLS = "Spark and Airflow, some dbt"
# The reader's usual reading of such a line: each item's first word a start, its last an
# end, the first start and the last end the surest, so the best span runs over all three.
SKILL_STARTS = {"Spark": 6.0, "Air": 4.0, "dbt": 3.5}
SKILL_ENDS = {"Spark": 3.5, "flow": 3.0, "dbt": 6.0}


def test_without_cuts_a_line_of_three_items_is_read_as_one() -> None:
    assert read(SKILLS, SKILL_STARTS, SKILL_ENDS, cut=False) == [SKILLS]


def test_with_cuts_each_item_is_one_answer_and_the_words_between_them_none() -> None:
    assert sorted(read(SKILLS, SKILL_STARTS, SKILL_ENDS, cut=True)) == [
        "Airflow",
        "Spark",
        "dbt",
    ]


def test_a_words_pieces_are_never_cut_apart() -> None:
    line = "Airflow"
    # "Air" reads as an end and "flow" as a start as surely as any item's: still one word.
    starts, ends = {"Air": 6.0, "flow": 4.0}, {"Air": 4.0, "flow": 6.0}

    assert read(line, starts, ends, cut=True) == ["Airflow"]


def test_a_part_must_clear_the_floor_by_its_own_end_not_only_by_its_start() -> None:
    line = "A garden big enough for the kids to kick a ball"
    # The sure start on "A" carries "A" | "kick a ball" over the floor, each part alone, with
    # a weak end on "A"; the cut itself (end of "A" + start of "kick") does not clear it.
    starts, ends = {"A": 7.0, "kick": 2.0}, {"A": 0.5, "ball": 6.0}

    assert read(line, starts, ends, cut=True) == [line]


def test_words_between_two_parts_read_as_a_start_then_an_end_are_an_item_of_their_own() -> None:
    line = "Python, a fair bit of Go, Postgres obviously"
    # "a fair bit of Go" scores 2.2 + 3.2 over "no answer", under the floor alone, but it was
    # inside the answer: the cut keeps it rather than drop it.
    starts = {"Python": 4.7, "a": 2.2, "Postgres": 4.6}
    ends = {"Python": 4.3, "Go": 3.2, "obviously": 5.1}

    assert sorted(read(line, starts, ends, cut=True)) == [
        "Postgres obviously",
        "Python",
        "a fair bit of Go",
    ]


def test_words_between_two_parts_read_as_no_item_belong_to_none() -> None:
    line = "Python, some Go"
    starts, ends = {"Python": 4.7, "Go": 4.0}, {"Python": 4.3, "Go": 5.0}

    assert sorted(read(line, starts, ends, cut=True)) == ["Go", "Python"]


def test_a_lines_four_answers_are_counted_before_their_cuts() -> None:
    line = "Power BI, Python, SQL all day, Excel obviously; Go; Rust; Java"
    starts = {"Power": 7.0, "Python": 5.0, "SQL": 5.0, "Excel": 5.0, "Go": 6.5, "Rust": 6.4}
    starts["Java"] = 6.3
    ends = {"BI": 5.0, "Python": 5.0, "day": 5.0, "obviously": 7.0, "Go": 6.5, "Rust": 6.4}
    ends["Java"] = 6.3

    found = read(line, starts, ends, cut=True)

    # The span over the first four items is one answer, cut in four; with Go, Rust and Java
    # there would be seven answers: the three surest of them are kept, seven items in all.
    assert found[:4] == ["Power BI", "Python", "SQL all day", "Excel obviously"]
    assert sorted(found[4:]) == ["Go", "Java", "Rust"]


def test_a_single_valued_fields_answer_is_never_cut() -> None:
    line = "Spark and Airflow, some dbt"
    offsets = tokens_of(line)
    words = [line[x:y] for x, y in offsets]
    start = np.array([0.0] + [SKILL_STARTS.get(w, -5.0) for w in words], dtype=np.float32)
    end = np.array([0.0] + [SKILL_ENDS.get(w, -5.0) for w in words], dtype=np.float32)

    found = answers(start, end, FIRST, offsets, line, margin=FLOOR, many=False, items=False)

    assert [line[a.start : a.end] for a in found] == [SKILLS]


def test_what_lies_between_two_parts_is_kept_item_by_item_as_surely_as_the_reader_reads() -> None:
    line = "Selenium, Playwright, Cypress, Postman for API tests, JMeter"
    # The surest cut joins Selenium to JMeter over three items read under the floor: the
    # surest of them is an item of its own, and so is what lies on either side of it, where
    # the reader reads no boundary surely enough to part Playwright from Cypress.
    starts = {"Selenium": 6.5, "Playwright": 3.7, "Cypress": 3.5, "Postman": 5.2, "JMeter": 6.0}
    ends = {"Selenium": 4.7, "Playwright": 1.1, "Cypress": 2.0, "tests": 3.5, "JMeter": 5.0}

    assert read(line, starts, ends, cut=True) == [
        "Selenium",
        "Playwright, Cypress",
        "Postman for API tests",
        "JMeter",
    ]
