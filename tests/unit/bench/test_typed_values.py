"""What typing the blind sets' dates, amounts and counts would make of the proposals: each
proposal of a typed field read as the product reads a typed field's words, and sorted."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from factledger.adapters.values.words import WordsValueReader
from factledger.bench.evalsets.cases import parse_cases
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.evalsets.typed_values import main, readings
from factledger.bench.proposal_eval import Made
from factledger.domain.provenance import Operation
from tests.unit.bench.test_blind_evalsets import CASE, _proposal


def _outcomes(*made: Made, currency: str | None = "USD") -> list[tuple[str, str | None, str]]:
    (case,) = parse_cases(copy.deepcopy(CASE))
    found = readings(CaseRun(case, list(made)), WordsValueReader(), currency)
    return [(r.field, r.read, r.outcome) for r in found]


def test_a_matched_amount_said_in_words_reads_as_the_writers_amount() -> None:
    said = Made(0, _proposal("budget", Operation.SET, "forty thousand dollars"))

    assert _outcomes(said) == [("budget", "40000 USD", "same")]


def test_a_matched_value_read_otherwise_or_not_at_all_is_told_apart() -> None:
    # "40 or 50 grand" holds the keyword "40" but says two numbers: typed, it is lost.
    assert _outcomes(Made(0, _proposal("budget", Operation.SET, "40 or 50 grand"))) == [
        ("budget", None, "unread")
    ]
    # Matched by the keyword "40", read as 40 where the writer wrote 40,000.
    assert _outcomes(Made(0, _proposal("budget", Operation.SET, "40 dollars"))) == [
        ("budget", "40 USD", "other")
    ]


def test_a_wrong_proposal_of_a_typed_field_is_either_still_proposed_or_dropped() -> None:
    wrong = Made(0, _proposal("team_size", Operation.SET, "we are a big team"))
    counted = Made(0, _proposal("team_size", Operation.SET, "about 30 people"))

    assert _outcomes(wrong, counted) == [
        ("team_size", None, "wrong_unread"),
        ("team_size", "30", "wrong_read"),
    ]


def test_a_wrong_proposal_whose_reading_is_the_expected_value_is_now_right() -> None:
    raw = copy.deepcopy(CASE)
    birth = {"field": "date_of_birth", "value": "1968-06-09", "keywords": ["1968"]}
    raw[0]["sessions"][0]["expect"]["proposals"].append(birth)
    (case,) = parse_cases(raw)
    # The scorer finds no "1968" in the words; their date is the writer's.
    said = Made(0, _proposal("date_of_birth", Operation.SET, "ninth of June sixty-eight"))

    (found,) = readings(CaseRun(case, [said]), WordsValueReader(), None)

    assert (found.read, found.outcome) == ("1968-06-09", "now_right")


def test_untyped_fields_and_requests_to_forget_are_not_read() -> None:
    made = [
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
        Made(1, _proposal("budget", Operation.FORGET, None)),
    ]

    assert _outcomes(*made) == []


def test_a_held_out_half_is_never_listed(tmp_path: Path) -> None:
    out = tmp_path / "detail.json"
    with pytest.raises(SystemExit, match="dev halves only"):
        main([str(tmp_path / "blind9" / "heldout"), "--detail", str(out)])
