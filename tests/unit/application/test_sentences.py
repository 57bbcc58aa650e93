"""One cut of a line into sentences for every reader of them (ADR 0176)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from structlog.testing import capture_logs

from factledger.application import sentences as sentences_module
from factledger.application.proposals.candidates import whole_sentence
from factledger.application.sentences import (
    forget_cuts,
    sentence_spans,
    sentences,
    sentences_covering,
    sentences_holding,
)


@pytest.mark.parametrize(
    ("line", "cut"),
    [
        (
            "Yes, Dr. Osei's my GP now. The cough is better.",
            ["Yes, Dr. Osei's my GP now.", "The cough is better."],
        ),
        ("I'm a nurse at St. Jude's in Houston.", ["I'm a nurse at St. Jude's in Houston."]),
        (
            "Dear Ms. Osei, thank you. Regards, W. Nowak",
            ["Dear Ms. Osei, thank you.", "Regards, W. Nowak"],
        ),
    ],
)
def test_a_title_or_an_initial_ends_no_sentence(line: str, cut: list[str]) -> None:
    assert sentences(line) == cut


def test_a_line_break_ends_a_sentence() -> None:
    form = "Name: Ewa Zielińska\nDate of birth: 17.10.1990\nDiet: vegan"

    assert sentences(form) == ["Name: Ewa Zielińska", "Date of birth: 17.10.1990", "Diet: vegan"]


def test_a_chats_lowercase_sentence_is_still_its_own() -> None:
    assert sentences("ok. my daughter will bring me. we eat mostly Vietnamese food") == [
        "ok.",
        "my daughter will bring me.",
        "we eat mostly Vietnamese food",
    ]


def test_a_number_or_a_version_ends_no_sentence() -> None:
    assert sentences("It's 4.1.2, not 4.2.1. Budget is 40,000.") == [
        "It's 4.1.2, not 4.2.1.",
        "Budget is 40,000.",
    ]


def test_spans_are_the_sentences_exactly_as_written() -> None:
    line = "  sorry.  sorry. GO MARCUS!  "

    spans = sentence_spans(line)

    assert [line[s:e] for s, e in spans] == ["sorry.", "sorry.", "GO MARCUS!"]
    assert sentences("") == []
    assert sentences("   ") == []


def test_the_sentence_holding_words_is_found_whatever_their_case() -> None:
    line = "Hi there. We buy from Vireo Wraps today. Thanks!"

    assert sentences_holding(line, "vireo wraps") == "We buy from Vireo Wraps today."
    assert sentences_holding(line, "Acme") is None
    assert sentences_holding(line, " ") is None


def test_words_read_across_a_cut_are_quoted_with_every_sentence_they_run_over() -> None:
    line = "Yes hi. Phone, my mobile. Police report number's PR-4471. Thanks."

    assert (
        sentences_holding(line, "my mobile. Police report")
        == "Phone, my mobile. Police report number's PR-4471."
    )


def test_a_quote_holds_the_value_it_proves() -> None:
    line = "Hello. And it's Dr. Osei now, she's lovely."

    assert (
        whole_sentence(line, containing=("it's Dr. Osei",))
        == "And it's Dr. Osei now, she's lovely."
    )
    assert whole_sentence(line, containing=("", "Nobody")) == "Hello."


def test_lines_cut_at_once_in_several_threads_are_each_cut_as_alone() -> None:
    lines = [f"Line {n}. Dr. Osei saw {n} patients. ok. next {n} please" for n in range(200)]
    alone = [sentences(line) for line in lines]
    forget_cuts()

    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(sentences, lines))

    assert together == alone


def test_the_sentences_covering_several_words_run_from_the_first_to_the_last() -> None:
    line = "Hi. Penicillin gives me hives. Not much else. Latex too, and kiwi. Bye."

    assert sentences_covering(line, ["latex", "penicillin"]) == (
        "Penicillin gives me hives. Not much else. Latex too, and kiwi."
    )
    assert sentences_covering(line, ["kiwi", "mango"]) == "Latex too, and kiwi."
    assert sentences_covering(line, ["mango", " "]) is None


def test_the_cache_of_cuts_holds_no_text() -> None:
    forget_cuts()
    line = "My PIN is 4417. Dr. Osei knows."

    sentences(line)

    held = list(sentences_module._cuts.items())
    assert len(held) == 1
    assert all(isinstance(key, bytes) and b"4417" not in key for key, _ in held)
    assert all(isinstance(n, int) for _, spans in held for span in spans for n in span)


def test_a_segmenter_fault_costs_a_line_only_its_titles(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def segment(self, text: str) -> list[object]:
            raise IndexError("a fault of the library's")

    monkeypatch.setattr(sentences_module, "_segmenter", Broken)
    forget_cuts()
    line = "Yes, Dr. Osei is my GP. ok. my number is 0171 5523 880\nThanks"

    with capture_logs() as logs:
        cut = sentences(line)
    forget_cuts()

    assert cut == ["Yes, Dr.", "Osei is my GP.", "ok.", "my number is 0171 5523 880", "Thanks"]
    assert [e["event"] for e in logs] == ["sentences.segmenter_failed"] * 2
    assert all(e["error_type"] == "IndexError" and "Osei" not in str(e) for e in logs)
